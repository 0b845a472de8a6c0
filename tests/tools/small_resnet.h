// Training nets of a ResNet on synthetic images for tests (SyntheticResNetSpec), and the one tests
// of model rewrites compare (SmallResNetSpec): ResNet-20 (every kind of block; 16, 32 and 64
// channels) on 8x8 synthetic images, 4 classes, batch 8 of 32 examples, a fixed learning rate.
#ifndef BRAID_TESTS_TOOLS_SMALL_RESNET_H_
#define BRAID_TESTS_TOOLS_SMALL_RESNET_H_

#include <string>

#include "runtime/models/model_builder.h"
#include "runtime/models/resnet.h"
#include "runtime/models/training_nets.h"

namespace braid {

// ResNet `model` (a ResNetSpecFromName name) with the images' channels and classes, trained on
// `images` (the test net on the same) at the fixed rate `base_lr`; its nets named after `name`.
inline TrainingNetsSpec SyntheticResNetSpec(const std::string& name, const std::string& model,
                                            const SyntheticImages& images, float base_lr) {
  TrainingNetsSpec spec;
  spec.name = name;
  const ResNetSpec resnet = ResNetSpecFromName(model, images.channels, images.classes);
  spec.forward = [resnet](ModelBuilder* b, const std::string& data) {
    return AddResNet(b, resnet, data);
  };
  spec.train_input = SyntheticImageReader(images, "reader");
  spec.test_input = SyntheticImageReader(images, "test_reader");
  spec.optimizer.lr.policy = "fixed";
  spec.optimizer.lr.base_lr = base_lr;
  return spec;
}

inline TrainingNetsSpec SmallResNetSpec() {
  return SyntheticResNetSpec("r20", "resnet20", {8, 1, 8, 4, /*examples=*/32}, 0.05f);
}

}  // namespace braid

#endif  // BRAID_TESTS_TOOLS_SMALL_RESNET_H_
