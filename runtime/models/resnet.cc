#include "runtime/models/resnet.h"

#include <map>

#include "braid/status.h"

namespace braid {
namespace {

struct StageLayout {
  std::vector<int> blocks;      // per stage
  std::vector<int64_t> widths;  // per stage: channels of the 3x3 convs
  bool bottleneck = false;
};

const std::map<int, std::vector<int>>& ImageNetBlocks() {
  static const auto* blocks = new std::map<int, std::vector<int>>{{18, {2, 2, 2, 2}},
                                                                  {34, {3, 4, 6, 3}},
                                                                  {50, {3, 4, 6, 3}},
                                                                  {101, {3, 4, 23, 3}},
                                                                  {152, {3, 8, 36, 3}}};
  return *blocks;
}

[[noreturn]] void ThrowBadDepth(const ResNetSpec& spec) {
  throw Error(Status::InvalidArgument(
      "ResNet depth " + std::to_string(spec.depth) + " is not supported for the " +
      (spec.style == ResNetStyle::kCifar ? "CIFAR style (depth 6n+2: 20, 32, 44, 56, 110)"
                                         : "ImageNet style (depth 18, 34, 50, 101 or 152)")));
}

StageLayout LayoutOf(const ResNetSpec& spec) {
  StageLayout layout;
  if (spec.style == ResNetStyle::kCifar) {
    if (spec.depth < 8 || (spec.depth - 2) % 6 != 0) ThrowBadDepth(spec);
    const int n = (spec.depth - 2) / 6;
    layout.blocks = {n, n, n};
    layout.widths = {16, 32, 64};
    return layout;
  }
  auto it = ImageNetBlocks().find(spec.depth);
  if (it == ImageNetBlocks().end()) ThrowBadDepth(spec);
  layout.blocks = it->second;
  layout.widths = {64, 128, 256, 512};
  layout.bottleneck = spec.depth >= 50;
  return layout;
}

// conv -> SpatialBN, the unit every branch is made of.
std::string ConvBN(ModelBuilder* b, const std::string& in, const std::string& name, int64_t dim_in,
                   int64_t dim_out, int kernel, int stride, float bn_scale = 1.f) {
  const std::string conv = b->Conv(in, name, dim_in, dim_out, kernel, stride, kernel / 2);
  return b->SpatialBN(conv, name + "_bn", dim_out, bn_scale);
}

struct BlockShape {
  int64_t dim_in, width, dim_out;
  int stride;
};

// The residual branch of a basic (two 3x3) or bottleneck (1x1, 3x3, 1x1) block.
std::string ResidualBranch(ModelBuilder* b, const std::string& in, const std::string& name,
                           const BlockShape& s, bool bottleneck, float last_bn_scale) {
  if (!bottleneck) {
    std::string x = ConvBN(b, in, name + "_conv1", s.dim_in, s.width, 3, s.stride);
    x = b->ReluInPlace(x, name + "_relu1");
    return ConvBN(b, x, name + "_conv2", s.width, s.dim_out, 3, 1, last_bn_scale);
  }
  std::string x = ConvBN(b, in, name + "_conv1", s.dim_in, s.width, 1, 1);
  x = b->ReluInPlace(x, name + "_relu1");
  x = ConvBN(b, x, name + "_conv2", s.width, s.width, 3, s.stride);
  x = b->ReluInPlace(x, name + "_relu2");
  return ConvBN(b, x, name + "_conv3", s.width, s.dim_out, 1, 1, last_bn_scale);
}

std::string ResidualBlock(ModelBuilder* b, const std::string& in, const std::string& name,
                          const BlockShape& s, bool bottleneck, float last_bn_scale) {
  const std::string branch = ResidualBranch(b, in, name, s, bottleneck, last_bn_scale);
  std::string shortcut = in;
  if (s.stride != 1 || s.dim_in != s.dim_out) {
    shortcut = ConvBN(b, in, name + "_proj", s.dim_in, s.dim_out, 1, s.stride);
  }
  // In place, as in Caffe2's ResNet builder: no gradient op reads a BN output or the sum.
  return b->ReluInPlace(b->SumInPlace({branch, shortcut}, name + "_sum"), name + "_relu");
}

// The stem: returns its output and channel count.
std::string Stem(ModelBuilder* b, const ResNetSpec& spec, const std::string& data,
                 int64_t* channels) {
  if (spec.style == ResNetStyle::kCifar) {
    *channels = 16;
    return b->ReluInPlace(ConvBN(b, data, "conv1", spec.input_channels, 16, 3, 1), "conv1_relu");
  }
  *channels = 64;
  const std::string x =
      b->ReluInPlace(ConvBN(b, data, "conv1", spec.input_channels, 64, 7, 2), "conv1_relu");
  return b->MaxPool(x, "pool1", 3, 2, 1);
}

}  // namespace

ResNetSpec ResNetSpecFromName(const std::string& name, int64_t input_channels,
                              int64_t num_classes) {
  ResNetSpec spec;
  spec.input_channels = input_channels;
  spec.num_classes = num_classes;
  const std::string prefix = "resnet";
  int depth = 0;
  if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() &&
      name.size() < prefix.size() + 4 &&
      name.find_first_not_of("0123456789", prefix.size()) == std::string::npos) {
    depth = std::stoi(name.substr(prefix.size()));
  }
  spec.depth = depth;
  spec.style = ImageNetBlocks().count(depth) ? ResNetStyle::kImageNet : ResNetStyle::kCifar;
  if (depth == 0 || (spec.style == ResNetStyle::kCifar && (depth < 8 || (depth - 2) % 6 != 0))) {
    std::string names;
    for (const std::string& n : ResNetNames()) names += (names.empty() ? "" : ", ") + n;
    throw Error(Status::InvalidArgument("unknown model '" + name + "'; known: " + names +
                                        " (CIFAR style for any depth 6n+2)"));
  }
  return spec;
}

std::vector<std::string> ResNetNames() {
  return {"resnet20", "resnet32", "resnet44", "resnet56",  "resnet110",
          "resnet18", "resnet34", "resnet50", "resnet101", "resnet152"};
}

std::string AddResNet(ModelBuilder* b, const ResNetSpec& spec, const std::string& data) {
  const StageLayout layout = LayoutOf(spec);
  const int64_t expansion = layout.bottleneck ? 4 : 1;
  int64_t channels = 0;
  std::string x = Stem(b, spec, data, &channels);
  for (size_t stage = 0; stage < layout.blocks.size(); ++stage) {
    for (int block = 0; block < layout.blocks[stage]; ++block) {
      BlockShape s;
      s.dim_in = channels;
      s.width = layout.widths[stage];
      s.dim_out = s.width * expansion;
      s.stride = (block == 0 && stage > 0) ? 2 : 1;
      const std::string name = "s" + std::to_string(stage + 1) + "_b" + std::to_string(block);
      x = ResidualBlock(b, x, name, s, layout.bottleneck, spec.last_bn_scale);
      channels = s.dim_out;
    }
  }
  x = b->GlobalAveragePool(x, "pool");
  return b->FC(x, "pred", channels, spec.num_classes);
}

}  // namespace braid
