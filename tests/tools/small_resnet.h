// The training nets tests of model rewrites compare: ResNet-20 (every kind of block; 16, 32 and 64
// channels) on 8x8 synthetic images, 4 classes, batch 8 of 32 examples, a fixed learning rate.
#ifndef BRAID_TESTS_TOOLS_SMALL_RESNET_H_
#define BRAID_TESTS_TOOLS_SMALL_RESNET_H_

#include <string>

#include "runtime/models/model_builder.h"
#include "runtime/models/resnet.h"
#include "runtime/models/training_nets.h"

namespace braid {

inline TrainingNetsSpec SmallResNetSpec() {
  TrainingNetsSpec spec;
  spec.name = "r20";
  spec.forward = [](ModelBuilder* b, const std::string& data) {
    return AddResNet(b, ResNetSpecFromName("resnet20", 1, 4), data);
  };
  spec.train_input = SyntheticImageReader({8, 1, 8, 4, /*examples=*/32}, "reader");
  spec.test_input = SyntheticImageReader({8, 1, 8, 4, /*examples=*/32}, "test_reader");
  spec.optimizer.lr.policy = "fixed";
  spec.optimizer.lr.base_lr = 0.05f;
  return spec;
}

}  // namespace braid

#endif  // BRAID_TESTS_TOOLS_SMALL_RESNET_H_
