// LabeledImages: a data set of uint8 images with int32 class labels, held in memory.
//
// LoadIdxImages pairs an IDX images file ([N, H, W], or [N, C, H, W]) with an IDX labels file
// ([N]) and checks that they agree: the same N, labels below `num_classes`. MakeSyntheticImages
// makes a data set of the same form from a seed, for benchmarks and tests that must not depend on
// files: each class has a random prototype image and every example is its class's prototype
// blended with noise, so a model can learn it.
//
//   LabeledImages train = LoadIdxImages(dir + "/train-images-idx3-ubyte.gz",
//                                       dir + "/train-labels-idx1-ubyte.gz");
//   train.count;            // 60000
//   train.Image(0)[0];      // first pixel of the first image
//
// Thread safety: a LabeledImages is a plain value; once built it may be read from any thread.
#ifndef BRAID_OPS_DATA_LABELED_IMAGES_H_
#define BRAID_OPS_DATA_LABELED_IMAGES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace braid {

struct LabeledImages {
  int64_t count = 0;
  int64_t channels = 1;
  int64_t height = 0;
  int64_t width = 0;
  std::vector<uint8_t> pixels;  // [count, channels, height, width], row-major
  std::vector<int32_t> labels;  // [count]

  int64_t image_size() const { return channels * height * width; }
  const uint8_t* Image(int64_t i) const { return pixels.data() + i * image_size(); }
};

// Throws braid::Error naming the file(s) when either cannot be read or they disagree.
LabeledImages LoadIdxImages(const std::string& images_path, const std::string& labels_path,
                            int num_classes = 256);

struct SyntheticImagesSpec {
  int64_t count = 1024;
  int64_t channels = 1;
  int64_t height = 28;
  int64_t width = 28;
  int num_classes = 10;
  uint64_t seed = 0;
};

// Deterministic for a given spec.
LabeledImages MakeSyntheticImages(const SyntheticImagesSpec& spec);

}  // namespace braid

#endif  // BRAID_OPS_DATA_LABELED_IMAGES_H_
