// Relu: Y = max(X, 0) elementwise, float32 (Caffe2's Relu). Y may be X (in-place).
// ReluGradient: dX = dY where Y > 0, else 0; inputs Y, dY; dX may be dY (in-place). The gradient
// reads Y, not X, so an in-place Relu (X -> X) still has a gradient.
#ifndef BRAID_OPS_MATH_RELU_OP_H_
#define BRAID_OPS_MATH_RELU_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class ReluOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

class ReluGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_RELU_OP_H_
