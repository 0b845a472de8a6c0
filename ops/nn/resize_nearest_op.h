// ResizeNearest: nearest-neighbour upsampling (or downsampling) of NCHW float32 tensors
// (Caffe2's ResizeNearest, what ONNX Upsample/Resize with mode "nearest" exports to).
//
//   X [N, C, H, W]  ->  Y [N, C, int(H * height_scale), int(W * width_scale)]
//   Y[n, c, y, x] = X[n, c, min(int(y / height_scale), H - 1), min(int(x / width_scale), W - 1)]
//
// Arguments, Caffe2's names and defaults: width_scale 1, height_scale 1 (both > 0; products and
// quotients in float32, truncated, as Caffe2 computes them), order NCHW (NHWC is refused).
// Caffe2's optional second input (the scales as a tensor) is not supported: shape inference must
// size Y from the arguments.
//
//   type: "ResizeNearest" input: "X" output: "Y"
//   arg { name: "width_scale" f: 2 } arg { name: "height_scale" f: 2 }
//
// ResizeNearestGradient: inputs dY, X (for its shape); output dX, each X element receiving the sum
// of the dY elements that copied it.
#ifndef BRAID_OPS_NN_RESIZE_NEAREST_OP_H_
#define BRAID_OPS_NN_RESIZE_NEAREST_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class ResizeNearestOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

class ResizeNearestGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_NN_RESIZE_NEAREST_OP_H_
