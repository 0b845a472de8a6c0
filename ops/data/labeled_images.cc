#include "ops/data/labeled_images.h"

#include <random>

#include "braid/status.h"
#include "runtime/core/dims_text.h"
#include "runtime/core/element_count.h"
#include "runtime/io/idx_file.h"

namespace braid {
namespace {

[[noreturn]] void ThrowMismatch(const std::string& images_path, const std::string& labels_path,
                                const std::string& message) {
  throw Error(Status::InvalidArgument("IDX files '" + images_path + "' and '" + labels_path +
                                      "': " + message));
}

void CheckSpec(const SyntheticImagesSpec& spec) {
  if (spec.count <= 0 || spec.channels <= 0 || spec.height <= 0 || spec.width <= 0 ||
      spec.num_classes <= 0) {
    throw Error(Status::InvalidArgument(
        "synthetic images need positive count, channels, height, width and classes; got count " +
        std::to_string(spec.count) + ", shape [" + std::to_string(spec.channels) + "," +
        std::to_string(spec.height) + "," + std::to_string(spec.width) + "], " +
        std::to_string(spec.num_classes) + " classes"));
  }
  // Both the images and the class prototypes must be countable (throws InvalidArgument if not).
  ElementCount({spec.count, spec.channels, spec.height, spec.width});
  ElementCount({spec.num_classes, spec.channels, spec.height, spec.width});
}

}  // namespace

LabeledImages LoadIdxImages(const std::string& images_path, const std::string& labels_path,
                            int num_classes) {
  IdxFile images = IdxFile::Load(images_path);
  IdxFile labels = IdxFile::Load(labels_path);
  if (images.ndim() != 3 && images.ndim() != 4) {
    throw Error(Status::InvalidArgument("IDX file '" + images_path + "': images must be [N,H,W] " +
                                        "or [N,C,H,W], got dims " + DimsText(images.dims())));
  }
  if (labels.ndim() != 1) {
    throw Error(Status::InvalidArgument("IDX file '" + labels_path + "': labels must be [N], got " +
                                        "dims " + DimsText(labels.dims())));
  }
  if (labels.dim(0) != images.dim(0)) {
    ThrowMismatch(images_path, labels_path,
                  "images " + DimsText(images.dims()) + " and labels " + DimsText(labels.dims()) +
                      " hold different numbers of examples");
  }
  LabeledImages set;
  set.count = images.dim(0);
  set.channels = images.ndim() == 4 ? images.dim(1) : 1;
  set.height = images.dim(images.ndim() - 2);
  set.width = images.dim(images.ndim() - 1);
  set.pixels = images.bytes();
  set.labels.reserve(static_cast<size_t>(set.count));
  for (int64_t i = 0; i < set.count; ++i) {
    const int label = labels.bytes()[i];
    if (label >= num_classes) {
      ThrowMismatch(images_path, labels_path,
                    "label " + std::to_string(label) + " of example " + std::to_string(i) +
                        " is not below the " + std::to_string(num_classes) + " classes");
    }
    set.labels.push_back(label);
  }
  return set;
}

LabeledImages MakeSyntheticImages(const SyntheticImagesSpec& spec) {
  CheckSpec(spec);
  LabeledImages set;
  set.count = spec.count;
  set.channels = spec.channels;
  set.height = spec.height;
  set.width = spec.width;
  // Raw engine output only (no std distributions), so the data is the same on every platform.
  std::mt19937_64 engine(spec.seed);
  const int64_t size = set.image_size();
  std::vector<uint8_t> prototypes(static_cast<size_t>(spec.num_classes * size));
  for (uint8_t& p : prototypes) p = static_cast<uint8_t>(engine() >> 56);
  set.pixels.resize(static_cast<size_t>(set.count * size));
  set.labels.resize(static_cast<size_t>(set.count));
  for (int64_t i = 0; i < set.count; ++i) {
    const int32_t label = static_cast<int32_t>(engine() % spec.num_classes);
    set.labels[i] = label;
    const uint8_t* prototype = prototypes.data() + label * size;
    uint8_t* image = set.pixels.data() + i * size;
    for (int64_t p = 0; p < size; ++p) {
      const unsigned noise = static_cast<unsigned>(engine() >> 56);
      image[p] = static_cast<uint8_t>((3u * prototype[p] + noise) / 4u);
    }
  }
  return set;
}

}  // namespace braid
