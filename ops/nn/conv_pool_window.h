// The window of a 2-D NCHW convolution or pooling (Caffe2's ConvPoolOpBase arguments), computed
// by one function that both the schemas' shape inference and the kernels call, so that they agree
// on every output size and report the same errors.
//
// Arguments, in Caffe2's three spellings (one value for both dims, one per dim, or a list):
//   kernel   | kernel_h, kernel_w          | kernels    (Conv: optional, else the filter's)
//   stride   | stride_h, stride_w          | strides    default 1
//   pad      | pad_t, pad_l, pad_b, pad_r  | pads       [t, l, b, r], default 0
//   dilation | dilation_h, dilation_w      | dilations  default 1, Conv only
//   order "NCHW" (the only one supported: "NHWC" is refused naming the op).
// legacy_pad (Caffe2's LegacyPadding) picks how pads and the output size follow, per spatial dim,
// with in the image size, k the kernel, s the stride, e = dilation * (k - 1) + 1:
//   0 NOTSET  the given pads;  out = (in + pad_begin + pad_end - e) / s + 1  (rounded down)
//   1 VALID   no pads;         out = (in - e) / s + 1
//   2 SAME    out = ceil(in / s); the pads it takes, max(0, (out - 1) * s + k - in), split with
//             the smaller half first (begin = need / 2). No dilation.
//   3 CAFFE_LEGACY_POOLING  Caffe's rounding up: with p the (symmetric) pad,
//             out = ceil((in + 2p - k) / s) + 1, less one if p > 0 and the last window would
//             start at or beyond in + p (it must start inside the image or its leading pad);
//             pad_begin = p, and pad_end is what the last window reaches past the image (it can
//             exceed p: the windows Caffe's rounding up adds). No dilation.
// VALID and SAME compute the pads themselves: giving pad arguments with them is an error (as in
// Caffe2). Pooling also requires pad < kernel on each side (a window entirely in the padding has
// no input), which rules out CAFFE_LEGACY_POOLING windows starting past the image.
// global_pooling (pooling only): the window is the whole image, stride 1, no pad, output 1x1,
// whatever legacy_pad says; the redundant kernel 0 (or the image size), stride 1, pad 0 and
// dilation 1 that exported nets carry are accepted, other values are errors.
//
//   ConvPoolWindow w = ComputeConvPoolWindow(def, x_info, WindowKind::kPool);
//   // w.output = {out_h, out_w}
//
// Every function is pure and thread-safe; errors are braid::Error (InvalidArgument) naming the
// argument, the blob and its shape.
#ifndef BRAID_OPS_NN_CONV_POOL_WINDOW_H_
#define BRAID_OPS_NN_CONV_POOL_WINDOW_H_

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/core/op_schema.h"

namespace braid {

enum class WindowKind { kConv, kPool };

struct ConvPoolWindow {
  using Pair = std::array<int64_t, 2>;  // (height, width)
  Pair kernel{}, stride{1, 1}, dilation{1, 1}, pad_begin{}, pad_end{};
  Pair output{};
  bool global_pooling = false;

  std::vector<int64_t> Strides() const { return {stride[0], stride[1]}; }
  std::vector<int64_t> Kernel() const { return {kernel[0], kernel[1]}; }
  std::vector<int64_t> PadBegin() const { return {pad_begin[0], pad_begin[1]}; }
  std::vector<int64_t> PadEnd() const { return {pad_end[0], pad_end[1]}; }
  // oneDNN's convention: 0 means no dilation.
  std::vector<int64_t> DnnlDilation() const { return {dilation[0] - 1, dilation[1] - 1}; }
};

// Input `i` of `def` is a float32 4-D NCHW tensor (named `role` in errors, e.g. "X").
void CheckNchwInput(const OperatorDef& def, const std::vector<ShapeInfo>& in, int i,
                    const char* role);

// The window of op `def` over X `x` (which must be NCHW float32). For Conv, `filter_kernel` is
// the filter's (kH, kW): the kernel arguments may be omitted, and must match when given.
ConvPoolWindow ComputeConvPoolWindow(const OperatorDef& def, const ShapeInfo& x, WindowKind kind,
                                     std::optional<ConvPoolWindow::Pair> filter_kernel = {});

// The window arguments above, for the schemas of the ops that read them (OpSchema::Args);
// kPool adds global_pooling; kConv adds Caffe2's cuDNN hints: exhaustive_search and
// ws_nbytes_limit, which the CUDA kernels read (ops/nn/conv_search_options.h), and shared_buffer,
// accepted and ignored.
std::vector<ArgSpec> ConvPoolWindowArgs(WindowKind kind);

}  // namespace braid

#endif  // BRAID_OPS_NN_CONV_POOL_WINDOW_H_
