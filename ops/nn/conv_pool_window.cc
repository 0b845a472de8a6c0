#include "ops/nn/conv_pool_window.h"

#include <algorithm>
#include <string>

#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"

namespace braid {
namespace {

using Pair = ConvPoolWindow::Pair;

std::string PairString(const Pair& p) {
  return "(" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ")";
}

// One (h, w) argument in Caffe2's spellings: `single` for both dims, `h` and `w`, or a 2-list.
std::optional<Pair> ReadPair(const ArgumentReader& args, const std::string& single,
                             const std::string& h, const std::string& w, const std::string& list) {
  const bool has_single = args.Has(single);
  const bool has_hw = args.Has(h) || args.Has(w);
  const bool has_list = args.Has(list);
  if (has_single + has_hw + has_list > 1) {
    ThrowInvalidArgument("set only one of '" + single + "', '" + h + "'/'" + w + "' and '" + list +
                         "'");
  }
  if (has_single) {
    const int64_t v = args.Get<int64_t>(single, 0);
    return Pair{v, v};
  }
  if (has_hw) {
    if (!args.Has(h) || !args.Has(w)) {
      ThrowInvalidArgument("set both '" + h + "' and '" + w + "', not only one of them");
    }
    return Pair{args.Get<int64_t>(h, 0), args.Get<int64_t>(w, 0)};
  }
  if (has_list) {
    const std::vector<int64_t> v = args.GetList<int64_t>(list);
    if (v.size() != 2) {
      ThrowInvalidArgument("argument '" + list + "' " + DimsText(v) +
                           " must hold 2 values (height, width)");
    }
    return Pair{v[0], v[1]};
  }
  return std::nullopt;
}

// Pads as (begin, end): `pad`, or pad_t/pad_l/pad_b/pad_r, or pads [t, l, b, r].
std::optional<std::array<Pair, 2>> ReadPads(const ArgumentReader& args) {
  const char* kSides[] = {"pad_t", "pad_l", "pad_b", "pad_r"};
  int sides = 0;
  for (const char* side : kSides) sides += args.Has(side);
  if (args.Has("pad") + (sides > 0) + args.Has("pads") > 1) {
    ThrowInvalidArgument("set only one of 'pad', 'pad_t'/'pad_l'/'pad_b'/'pad_r' and 'pads'");
  }
  if (args.Has("pad")) {
    const int64_t p = args.Get<int64_t>("pad", 0);
    return std::array<Pair, 2>{Pair{p, p}, Pair{p, p}};
  }
  if (sides > 0) {
    if (sides != 4) ThrowInvalidArgument("set all of 'pad_t', 'pad_l', 'pad_b' and 'pad_r'");
    return std::array<Pair, 2>{Pair{args.Get<int64_t>("pad_t", 0), args.Get<int64_t>("pad_l", 0)},
                               Pair{args.Get<int64_t>("pad_b", 0), args.Get<int64_t>("pad_r", 0)}};
  }
  if (args.Has("pads")) {
    const std::vector<int64_t> v = args.GetList<int64_t>("pads");
    if (v.size() != 4) {
      ThrowInvalidArgument("argument 'pads' " + DimsText(v) +
                           " must hold 4 values (top, left, bottom, right)");
    }
    return std::array<Pair, 2>{Pair{v[0], v[1]}, Pair{v[2], v[3]}};
  }
  return std::nullopt;
}

// Caffe2's LegacyPadding.
enum class LegacyPad { kNotSet = 0, kValid = 1, kSame = 2, kCaffeLegacyPooling = 3 };

const char* LegacyPadName(LegacyPad mode) {
  switch (mode) {
    case LegacyPad::kNotSet:
      return "NOTSET (0)";
    case LegacyPad::kValid:
      return "VALID (1)";
    case LegacyPad::kSame:
      return "SAME (2)";
    case LegacyPad::kCaffeLegacyPooling:
      return "CAFFE_LEGACY_POOLING (3)";
  }
  return "?";
}

LegacyPad ReadLegacyPad(const ArgumentReader& args) {
  const int64_t mode = args.Get<int64_t>("legacy_pad", 0);
  if (mode < 0 || mode > 3) {
    ThrowInvalidArgument("legacy_pad " + std::to_string(mode) +
                         " is not one of NOTSET=0, VALID=1, SAME=2, CAFFE_LEGACY_POOLING=3");
  }
  return static_cast<LegacyPad>(mode);
}

bool HasPadArguments(const ArgumentReader& args) {
  for (const char* name : {"pad", "pad_t", "pad_l", "pad_b", "pad_r", "pads"}) {
    if (args.Has(name)) return true;
  }
  return false;
}

void CheckAtLeast(const Pair& p, int64_t min, const char* name) {
  if (p[0] < min || p[1] < min) {
    ThrowInvalidArgument(std::string(name) + " " + PairString(p) +
                         " must be >= " + std::to_string(min));
  }
}

void CheckOrder(const OperatorDef& def, const ArgumentReader& args) {
  const std::string order = args.Get<std::string>("order", "NCHW");
  if (order != "NCHW") {
    ThrowInvalidArgument(def.type() + " supports order 'NCHW' only: order '" + order + "' of '" +
                         def.output(0) + "' is not supported (transpose the input to NCHW)");
  }
}

// Global pooling: the whole image, stride 1, no pad. The arguments exported nets carry along with
// it (kernel 0 or the image size, stride 1, pad 0, dilation 1) are accepted; others are errors.
void ApplyGlobalPooling(const ArgumentReader& args, const ShapeInfo& x, ConvPoolWindow* w) {
  const Pair image{x.dims[2], x.dims[3]};
  const auto kernel = ReadPair(args, "kernel", "kernel_h", "kernel_w", "kernels");
  if (kernel && *kernel != Pair{0, 0} && *kernel != image) {
    ThrowInvalidArgument("global_pooling takes the whole image " + PairString(image) +
                         " as the window: kernel " + PairString(*kernel) +
                         " must be left out, 0 or the image size");
  }
  const auto stride = ReadPair(args, "stride", "stride_h", "stride_w", "strides");
  const auto dilation = ReadPair(args, "dilation", "dilation_h", "dilation_w", "dilations");
  const auto pads = ReadPads(args);
  if ((stride && *stride != Pair{1, 1}) || (dilation && *dilation != Pair{1, 1}) ||
      (pads && ((*pads)[0] != Pair{0, 0} || (*pads)[1] != Pair{0, 0}))) {
    ThrowInvalidArgument(
        "global_pooling takes no stride, pad or dilation arguments (or stride 1, pad 0, "
        "dilation 1)");
  }
  w->global_pooling = true;
  w->kernel = image;
  w->output = {1, 1};
}

void ReadWindowArgs(const ArgumentReader& args, WindowKind kind, std::optional<Pair> filter_kernel,
                    ConvPoolWindow* w) {
  std::optional<Pair> kernel = ReadPair(args, "kernel", "kernel_h", "kernel_w", "kernels");
  if (filter_kernel && kernel && *kernel != *filter_kernel) {
    ThrowInvalidArgument("kernel " + PairString(*kernel) + " differs from the filter's " +
                         PairString(*filter_kernel));
  }
  if (!kernel) kernel = filter_kernel;
  if (!kernel)
    ThrowInvalidArgument("set the window size: 'kernel', 'kernel_h'/'kernel_w' or 'kernels'");
  w->kernel = *kernel;
  w->stride = ReadPair(args, "stride", "stride_h", "stride_w", "strides").value_or(Pair{1, 1});
  w->dilation =
      ReadPair(args, "dilation", "dilation_h", "dilation_w", "dilations").value_or(Pair{1, 1});
  if (auto pads = ReadPads(args)) {
    w->pad_begin = (*pads)[0];
    w->pad_end = (*pads)[1];
  }
  CheckAtLeast(w->kernel, 1, "kernel");
  CheckAtLeast(w->stride, 1, "stride");
  CheckAtLeast(w->dilation, 1, "dilation");
  CheckAtLeast(w->pad_begin, 0, "pad (top, left)");
  CheckAtLeast(w->pad_end, 0, "pad (bottom, right)");
  if (kind == WindowKind::kPool && w->dilation != Pair{1, 1}) {
    ThrowInvalidArgument("pooling takes no dilation");
  }
}

// The legacy_pad rules that constrain the arguments (see the header).
void CheckLegacyPadArgs(LegacyPad mode, const ArgumentReader& args, const ConvPoolWindow& w) {
  if ((mode == LegacyPad::kValid || mode == LegacyPad::kSame) && HasPadArguments(args)) {
    ThrowInvalidArgument(std::string("legacy_pad ") + LegacyPadName(mode) +
                         " computes the pads itself: give no pad arguments with it");
  }
  if ((mode == LegacyPad::kSame || mode == LegacyPad::kCaffeLegacyPooling) &&
      w.dilation != Pair{1, 1}) {
    ThrowInvalidArgument(std::string("legacy_pad ") + LegacyPadName(mode) +
                         " takes no dilation, got " + PairString(w.dilation));
  }
  if (mode == LegacyPad::kCaffeLegacyPooling && w.pad_begin != w.pad_end) {
    ThrowInvalidArgument("legacy_pad CAFFE_LEGACY_POOLING (3) takes one pad per dim, the same at "
                         "both ends; got (top, left) " + PairString(w.pad_begin) +
                         " and (bottom, right) " + PairString(w.pad_end));
  }
}

// Sets the pads and output size along spatial dim d of an image `in` long; false when the window
// does not fit the (padded) image.
bool SizeAndPadDim(LegacyPad mode, int64_t in, int d, ConvPoolWindow* w) {
  const int64_t k = w->kernel[d], s = w->stride[d];
  const int64_t extent = w->dilation[d] * (k - 1) + 1;
  int64_t& begin = w->pad_begin[d];
  int64_t& end = w->pad_end[d];
  switch (mode) {
    case LegacyPad::kNotSet:
    case LegacyPad::kValid:  // pads are 0: no pad arguments
      break;
    case LegacyPad::kSame: {
      const int64_t out = (in + s - 1) / s;
      const int64_t need = std::max<int64_t>(0, (out - 1) * s + k - in);
      begin = need / 2;
      end = need - begin;
      break;
    }
    case LegacyPad::kCaffeLegacyPooling: {
      const int64_t p = begin;
      if (in + 2 * p < k) return false;
      int64_t out = (in + 2 * p - k + s - 1) / s + 1;
      if (p > 0 && (out - 1) * s >= in + p) --out;
      // What the last window reaches past the image; never below 0 (a window that ends inside
      // the image needs no end pad, and the rounded-down size is then `out` already).
      end = std::max<int64_t>(0, (out - 1) * s + k - in - p);
      w->output[d] = out;
      return true;
    }
  }
  const int64_t padded = in + begin + end;
  if (padded < extent) return false;
  w->output[d] = (padded - extent) / s + 1;
  return true;
}

void CheckPoolPads(const ConvPoolWindow& w) {
  for (int d = 0; d < 2; ++d) {
    if (w.pad_begin[d] >= w.kernel[d] || w.pad_end[d] >= w.kernel[d]) {
      ThrowInvalidArgument("pads (top, left) " + PairString(w.pad_begin) +
                           " and (bottom, right) " + PairString(w.pad_end) +
                           " must be smaller than the kernel " + PairString(w.kernel) +
                           " (a window entirely in the padding has no input)");
    }
  }
}

}  // namespace

std::vector<ArgSpec> ConvPoolWindowArgs(WindowKind kind) {
  std::vector<ArgSpec> args;
  for (const char* name :
       {"kernel", "kernel_h", "kernel_w", "stride", "stride_h", "stride_w", "pad", "pad_t", "pad_l",
        "pad_b", "pad_r", "dilation", "dilation_h", "dilation_w", "legacy_pad"}) {
    args.push_back({name, ArgKind::kInt});
  }
  for (const char* name : {"kernels", "strides", "pads", "dilations"}) {
    args.push_back({name, ArgKind::kInts});
  }
  args.push_back({"order", ArgKind::kString});
  if (kind == WindowKind::kPool) args.push_back({"global_pooling", ArgKind::kInt});
  // Caffe2's cuDNN engine hints, which published nets carry: the CUDA kernels read the first three
  // (ops/nn/conv_search_options.h); the CPU kernels (deterministic already) and shared_buffer
  // ignore them.
  if (kind == WindowKind::kConv) {
    for (const char* name :
         {"exhaustive_search", "deterministic", "ws_nbytes_limit", "shared_buffer"}) {
      args.push_back({name, ArgKind::kInt});
    }
  }
  return args;
}

void CheckNchwInput(const OperatorDef& def, const std::vector<ShapeInfo>& in, int i,
                    const char* role) {
  if (in[i].dtype != DType::kFloat32 || in[i].dims.size() != 4) {
    ThrowInvalidArgument(std::string(role) + " " + DescribeBlob(def.input(i), in[i]) +
                         " must be a float32 4-D tensor (NCHW)");
  }
}

ConvPoolWindow ComputeConvPoolWindow(const OperatorDef& def, const ShapeInfo& x, WindowKind kind,
                                     std::optional<Pair> filter_kernel) {
  const ArgumentReader args(def.arg());
  CheckOrder(def, args);
  const LegacyPad mode = ReadLegacyPad(args);
  ConvPoolWindow w;
  if (kind == WindowKind::kPool && args.Get<bool>("global_pooling", false)) {
    ApplyGlobalPooling(args, x, &w);
    return w;
  }
  ReadWindowArgs(args, kind, filter_kernel, &w);
  CheckLegacyPadArgs(mode, args, w);
  for (int d = 0; d < 2; ++d) {
    if (!SizeAndPadDim(mode, x.dims[2 + d], d, &w)) {
      ThrowInvalidArgument("the window " + PairString(w.kernel) + " (dilation " +
                           PairString(w.dilation) + ") does not fit X " +
                           DescribeBlob(def.input(0), x) + " padded by " + PairString(w.pad_begin) +
                           " and " + PairString(w.pad_end) + " (legacy_pad " +
                           LegacyPadName(mode) + ")");
    }
  }
  if (kind == WindowKind::kPool) CheckPoolPads(w);
  return w;
}

}  // namespace braid
