// ResNet forward passes (He et al. 2015) built with ModelBuilder.
//
// Two families, both NCHW, for any input size and channel count:
//   CIFAR style, depth 6n+2 (resnet20, resnet32, resnet56, ...): a 3x3 conv to 16 channels, three
//     stages of n basic blocks with 16, 32 and 64 channels (stages 2 and 3 halve the resolution),
//     global average pooling and an FC layer.
//   ImageNet style, depth 18, 34, 50, 101 or 152: a 7x7/2 conv to 64 channels and a 3x3/2 max
//     pool, four stages with 64, 128, 256 and 512 channels (basic blocks for 18 and 34,
//     bottleneck blocks of 4x expansion, strided in the 3x3 conv, for 50 and deeper), global
//     average pooling and an FC layer.
// Every conv is followed by SpatialBN and has no bias. A block whose shape changes (stride or
// channels) gets a projection shortcut, a 1x1 conv with SpatialBN; others add the identity. As in
// Caffe2's builder, every Relu overwrites the SpatialBN output it reads and each block's Sum
// accumulates into its branch's last SpatialBN output (no gradient op reads those blobs), so a
// block's output blob is named after that SpatialBN ("s1_b0_conv2_bn").
//
//   ModelBuilder b(&params, &net, {});
//   std::string logits = AddResNet(&b, ResNetSpecFromName("resnet20", 3, 10), "data");
//   // logits: [N, 10]; params.TrainableCount() == 272474
//
// Thread safety: pure functions over the builder they are given.
#ifndef BRAID_RUNTIME_MODELS_RESNET_H_
#define BRAID_RUNTIME_MODELS_RESNET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/models/model_builder.h"

namespace braid {

enum class ResNetStyle { kCifar, kImageNet };

struct ResNetSpec {
  ResNetStyle style = ResNetStyle::kCifar;
  int depth = 20;
  int64_t input_channels = 3;
  int64_t num_classes = 10;
  // Initial scale of the last batch norm of every residual branch; 0 makes each block start as
  // the identity (Goyal et al. 2017).
  float last_bn_scale = 1.f;
};

// "resnet20" (CIFAR style) or "resnet50" (ImageNet style). Throws braid::Error (InvalidArgument)
// for other names or depths, listing the valid ones.
ResNetSpec ResNetSpecFromName(const std::string& name, int64_t input_channels, int64_t num_classes);
// Model names ResNetSpecFromName accepts, for flag help.
std::vector<std::string> ResNetNames();

// Appends the forward pass from `data` [N, input_channels, H, W]; returns the logits blob
// [N, num_classes]. Throws braid::Error for a depth the style does not support.
std::string AddResNet(ModelBuilder* builder, const ResNetSpec& spec, const std::string& data);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_RESNET_H_
