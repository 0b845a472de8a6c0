// ConvTranspose: 2-D transposed convolution ("deconvolution") of NCHW float32 tensors, the adjoint
// of Conv (Caffe2's ConvTranspose; ONNX ConvTranspose exports to it).
//
//   X [N, C, H, W], filter [C, M/group, kH, kW], optional bias [M]  ->  Y [N, M, outH, outW]
//   out = (in - 1) * stride + kernel + adj - pad_begin - pad_end      per spatial dim
//
// Y is what Conv's backward pass gives for dY = X: each X element scatters filter-weighted values
// into a kH x kW patch of Y at stride `stride`, cropped by the pads. Arguments, Caffe2's names:
// kernel | kernel_h, kernel_w | kernels (optional: the filter's are used, and must match when
// given), stride | stride_h, stride_w | strides (default 1), pad | pad_t, pad_l, pad_b, pad_r |
// pads (default 0), adj | adj_h, adj_w | adjs (default 0, rows and columns added at the bottom
// right; must be < stride), group (default 1, divides C and M), order NCHW. Refused: dilation
// (Caffe2's ConvTranspose has none), legacy_pad other than 0 (give explicit pads), order NHWC.
//
//   type: "ConvTranspose" input: "X" input: "W" input: "b" output: "Y"
//   arg { name: "kernel" i: 4 } arg { name: "stride" i: 2 } arg { name: "pad" i: 1 }
//
// Kernel: per sample and group, cols = W_g^T X_g (cblas_sgemm) and Col2Im (ops/nn/im2col.h)
// scatters the columns into Y; the columns live in the thread's scratch area
// (runtime/exec/scratch.h). The gradient is ConvTransposeGradient
// (ops/nn/conv_transpose_gradient_op.h).
#ifndef BRAID_OPS_NN_CONV_TRANSPOSE_OP_H_
#define BRAID_OPS_NN_CONV_TRANSPOSE_OP_H_

#include <cstdint>
#include <vector>

#include "ops/nn/conv_pool_window.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

struct ConvTransposeShapes {
  // kernel, stride and pads of the convolution that maps Y back onto X's grid (window.output is
  // X's spatial size).
  ConvPoolWindow window;
  ConvPoolWindow::Pair adj{};
  int64_t group = 1;
  bool has_bias = false;
  std::vector<int64_t> x_dims, filter_dims, y_dims;

  int64_t in_channels_per_group() const { return x_dims[1] / group; }
  int64_t out_channels_per_group() const { return filter_dims[1]; }
  // Rows of a group's column matrix: M/group * kH * kW.
  int64_t col_rows() const { return filter_dims[1] * filter_dims[2] * filter_dims[3]; }
  int64_t x_plane() const { return x_dims[2] * x_dims[3]; }
  int64_t y_plane() const { return y_dims[2] * y_dims[3]; }
  ConvPoolWindow::Pair y_size() const { return {y_dims[2], y_dims[3]}; }
};

// The shapes of ConvTranspose op `def` with inputs X, filter and (when `in` has 3 entries) bias.
// Throws braid::Error naming the blobs for bad windows, channel counts, groups or bias.
ConvTransposeShapes ComputeConvTransposeShapes(const OperatorDef& def,
                                               const std::vector<ShapeInfo>& in);

// Throws braid::Error when a group's GEMM dimensions exceed BLAS's int.
void CheckConvTransposeBlasSizes(const OperatorDef& def, const ConvTransposeShapes& s);

class ConvTransposeOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_NN_CONV_TRANSPOSE_OP_H_
