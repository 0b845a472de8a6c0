// The window of a 2-D NCHW convolution or pooling (Caffe2's ConvPoolOpBase arguments), computed
// by one function that both the schemas' shape inference and the kernels call, so that they agree
// on every output size and report the same errors.
//
// Arguments, in Caffe2's three spellings (one value for both dims, one per dim, or a list):
//   kernel   | kernel_h, kernel_w          | kernels    (Conv: optional, else the filter's)
//   stride   | stride_h, stride_w          | strides    default 1
//   pad      | pad_t, pad_l, pad_b, pad_r  | pads       [t, l, b, r], default 0
//   dilation | dilation_h, dilation_w      | dilations  default 1, Conv only
//   order "NCHW" (the only one supported), legacy_pad 0 (NOTSET) only,
//   global_pooling (pooling only: the window is the whole image, stride 1, no pad).
// Output size per spatial dim (Caffe2's rule, rounded down):
//   out = (in + pad_begin + pad_end - (dilation * (kernel - 1) + 1)) / stride + 1
// Pooling also requires pad < kernel (a window entirely in the padding has no input).
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
#include "runtime/op_schema.h"

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

}  // namespace braid

#endif  // BRAID_OPS_NN_CONV_POOL_WINDOW_H_
