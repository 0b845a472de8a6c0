#include "runtime/models/resnet_training.h"

#include "runtime/models/resnet.h"

namespace braid {

SyntheticImages ResNetImages(const std::string& model, int64_t batch, const ImageRequest& request) {
  const bool imagenet = ResNetSpecFromName(model, 1, 1).style == ResNetStyle::kImageNet;
  const auto or_default = [imagenet](int64_t value, int64_t cifar, int64_t in) {
    return value > 0 ? value : (imagenet ? in : cifar);
  };
  SyntheticImages images;
  images.batch = batch;
  images.channels = or_default(request.channels, 1, 3);
  images.image_size = or_default(request.image_size, 28, 224);
  images.classes = or_default(request.classes, 10, 1000);
  return images;
}

TrainingNetsSpec ResNetNetsSpec(const std::string& model, const SyntheticImages& images) {
  const ResNetSpec resnet = ResNetSpecFromName(model, images.channels, images.classes);
  TrainingNetsSpec spec;
  spec.name = model;
  spec.forward = [resnet](ModelBuilder* b, const std::string& data) {
    return AddResNet(b, resnet, data);
  };
  spec.optimizer.lr.policy = "fixed";
  return spec;
}

}  // namespace braid
