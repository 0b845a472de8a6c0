#include "ops/nn/conv_pool_window.h"

#include <string>

#include "ops/common/op_checks.h"
#include "runtime/argument.h"

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
      ThrowInvalidArgument("argument '" + list + "' " + DimsString(v) +
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
      ThrowInvalidArgument("argument 'pads' " + DimsString(v) +
                           " must hold 4 values (top, left, bottom, right)");
    }
    return std::array<Pair, 2>{Pair{v[0], v[1]}, Pair{v[2], v[3]}};
  }
  return std::nullopt;
}

void CheckAtLeast(const Pair& p, int64_t min, const char* name) {
  if (p[0] < min || p[1] < min) {
    ThrowInvalidArgument(std::string(name) + " " + PairString(p) +
                         " must be >= " + std::to_string(min));
  }
}

void CheckCommonArgs(const OperatorDef& def, const ArgumentReader& args) {
  const std::string order = args.Get<std::string>("order", "NCHW");
  if (order != "NCHW") {
    ThrowInvalidArgument("order '" + order + "' of '" + def.output(0) +
                         "' is not supported: nn ops take NCHW tensors only");
  }
  if (args.Get<int64_t>("legacy_pad", 0) != 0) {
    ThrowInvalidArgument("legacy_pad " + std::to_string(args.Get<int64_t>("legacy_pad", 0)) +
                         " is not supported: give explicit pads");
  }
}

// Kernel for global pooling: the whole image; stride, pad and dilation must be left unset.
void ApplyGlobalPooling(const ArgumentReader& args, const ShapeInfo& x, ConvPoolWindow* w) {
  if (ReadPair(args, "stride", "stride_h", "stride_w", "strides") || ReadPads(args) ||
      ReadPair(args, "dilation", "dilation_h", "dilation_w", "dilations")) {
    ThrowInvalidArgument("global_pooling takes no stride, pad or dilation arguments");
  }
  w->global_pooling = true;
  w->kernel = {x.dims[2], x.dims[3]};
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
  if (kind == WindowKind::kPool) {
    if (w->dilation != Pair{1, 1}) ThrowInvalidArgument("pooling takes no dilation");
    for (int d = 0; d < 2; ++d) {
      if (w->pad_begin[d] >= w->kernel[d] || w->pad_end[d] >= w->kernel[d]) {
        ThrowInvalidArgument("pads (top, left) " + PairString(w->pad_begin) +
                             " and (bottom, right) " + PairString(w->pad_end) +
                             " must be smaller than the kernel " + PairString(w->kernel));
      }
    }
  }
}

}  // namespace

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
  CheckCommonArgs(def, args);
  ConvPoolWindow w;
  if (kind == WindowKind::kPool && args.Get<bool>("global_pooling", false)) {
    ApplyGlobalPooling(args, x, &w);
  } else {
    ReadWindowArgs(args, kind, filter_kernel, &w);
  }
  for (int d = 0; d < 2; ++d) {
    const int64_t padded = x.dims[2 + d] + w.pad_begin[d] + w.pad_end[d];
    const int64_t extent = w.dilation[d] * (w.kernel[d] - 1) + 1;
    if (padded < extent) {
      ThrowInvalidArgument("the window " + PairString(w.kernel) + " (dilation " +
                           PairString(w.dilation) + ") does not fit X " +
                           DescribeBlob(def.input(0), x) + " padded by " + PairString(w.pad_begin) +
                           " and " + PairString(w.pad_end));
    }
    w.output[d] = (padded - extent) / w.stride[d] + 1;
  }
  return w;
}

}  // namespace braid
