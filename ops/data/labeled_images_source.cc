#include "ops/data/labeled_images_source.h"

#include <cstring>

#include "braid/status.h"

namespace braid {

LabeledImagesSource::LabeledImagesSource(std::shared_ptr<const LabeledImages> images, float mean,
                                         float std)
    : images_(std::move(images)), normalise_(mean, std) {
  if (images_->count <= 0) {
    throw Error(Status::InvalidArgument("batch prefetcher: the data set is empty"));
  }
  outputs_ = {{DType::kFloat32, {images_->channels, images_->height, images_->width}},
              {DType::kInt32, {}}};
}

void LabeledImagesSource::Decode(int64_t example, const std::vector<uint8_t*>& slots) {
  normalise_.Apply(images_->Image(example), images_->image_size(),
                   reinterpret_cast<float*>(slots[0]));
  std::memcpy(slots[1], &images_->labels[example], sizeof(int32_t));
}

}  // namespace braid
