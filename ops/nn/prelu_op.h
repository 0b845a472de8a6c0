// PRelu: Y = X where X > 0, else slope * X, float32 (Caffe2's PRelu).
//
//   X [N, C, ...] (NCHW) or [N, ..., C] (order "NHWC"), Slope [C] or [1]  ->  Y, X's shape
//
// Slope holds one value per channel (dim 1 for NCHW, the last dim for NHWC) or a single value
// shared by every element. Y may be X (in-place).
//
//   type: "PRelu" input: "X" input: "Slope" output: "Y"
//
// PReluGradient (inputs Y, dY, X, Slope; outputs dX, dSlope), Caffe2's:
//   dX = dY where X > 0, else slope * dY;   dSlope[c] = sum of dY * X over channel c where X <= 0.
// It reads X, so the gradient maker refuses a PRelu computed in place (X overwritten by Y).
#ifndef BRAID_OPS_NN_PRELU_OP_H_
#define BRAID_OPS_NN_PRELU_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class PReluOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

class PReluGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_NN_PRELU_OP_H_
