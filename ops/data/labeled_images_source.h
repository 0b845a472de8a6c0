// LabeledImagesSource: a LabeledImages set (ops/data/labeled_images.h) as an ExampleSource
// (ops/data/example_source.h) of two outputs: the image, float32 [C, H, W] normalised by
// PixelNormalisation (ops/data/pixel_normalisation.h), and its label, int32 [].
//
//   auto source = std::make_unique<LabeledImagesSource>(images, /*mean=*/0.286f, /*std=*/0.353f);
//
// Throws braid::Error (InvalidArgument) for an empty set or a std that is not positive.
// Thread safety: as ExampleSource; it shares ownership of the images, which it never changes.
#ifndef BRAID_OPS_DATA_LABELED_IMAGES_SOURCE_H_
#define BRAID_OPS_DATA_LABELED_IMAGES_SOURCE_H_

#include <memory>
#include <vector>

#include "ops/data/example_source.h"
#include "ops/data/labeled_images.h"
#include "ops/data/pixel_normalisation.h"

namespace braid {

class LabeledImagesSource final : public ExampleSource {
 public:
  LabeledImagesSource(std::shared_ptr<const LabeledImages> images, float mean, float std);

  int64_t count() const override { return images_->count; }
  const std::vector<ExampleOutput>& outputs() const override { return outputs_; }
  void Decode(int64_t example, const std::vector<uint8_t*>& slots) override;

 private:
  const std::shared_ptr<const LabeledImages> images_;
  const PixelNormalisation normalise_;
  std::vector<ExampleOutput> outputs_;
};

}  // namespace braid

#endif  // BRAID_OPS_DATA_LABELED_IMAGES_SOURCE_H_
