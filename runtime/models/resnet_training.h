// ResNet training nets by model name, on synthetic images: what braid_model writes, the training
// footprint predicts (runtime/models/training_footprint.h) and the training benchmarks run
// (tools/bench/training_rows.h), built one way.
//
//   const SyntheticImages images = ResNetImages("resnet50", /*batch=*/32, {});  // 3x224x224, 1000
//   TrainingNetsSpec spec = ResNetNetsSpec("resnet50", images);
//   spec.train_input = SyntheticImageReader(images, "train_reader");
//   spec.test_input = SyntheticImageReader(images, "test_reader");
//   TrainingNets nets = BuildTrainingNets(spec);
//
// Errors: an unknown model name throws braid::Error (InvalidArgument) listing the known ones.
// Thread safety: pure functions.
#ifndef BRAID_RUNTIME_MODELS_RESNET_TRAINING_H_
#define BRAID_RUNTIME_MODELS_RESNET_TRAINING_H_

#include <cstdint>
#include <string>

#include "runtime/models/training_nets.h"

namespace braid {

// What a caller asks of the images; a value <= 0 asks for the model's default.
struct ImageRequest {
  int64_t channels = 0, image_size = 0, classes = 0;
};

// A batch of `batch` synthetic images for `model`: the request's values, or the defaults of the
// model's family (CIFAR style: 1x28x28 and 10 classes, Fashion-MNIST's; ImageNet style:
// 3x224x224 and 1000 classes).
SyntheticImages ResNetImages(const std::string& model, int64_t batch, const ImageRequest& request);

// The spec of `model`'s training nets for `images`' channels and classes, named after the model,
// with a fixed learning rate (a schedule changes no memory and needs a run length). The inputs,
// the device and the memory options are the caller's.
TrainingNetsSpec ResNetNetsSpec(const std::string& model, const SyntheticImages& images);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_RESNET_TRAINING_H_
