// WeightedSum: Y = w0 * X0 + w1 * X1 + ..., float32 (Caffe2's WeightedSum).
//
// Inputs come in pairs (X_i, w_i): the X_i share one shape, each w_i is a float32 with one
// element. Y has X0's shape and may be X0 (in place), the usual SGD step param = 1 * param +
// (-lr) * grad:
//   op { type: "WeightedSum" input: "w" input: "ONE" input: "w_grad" input: "lr" output: "w" }
//
// WeightedSumGradient: (dY, X0, w0, X1, w1, ...) -> dX_i = w_i * dY; with `grad_on_w` = 1 it also
// writes dw_i = sum_j dY[j] * X_i[j] after all the dX_i.
#ifndef BRAID_OPS_TRAIN_WEIGHTED_SUM_OP_H_
#define BRAID_OPS_TRAIN_WEIGHTED_SUM_OP_H_

#include <vector>

#include "runtime/core/operator.h"

namespace braid {

// Shape inference and input checks of WeightedSum and of its gradient (inputs dY, X0, w0, ...;
// outputs dX0, dX1, ... [, dw0, dw1, ...]), shared with the CUDA kernels.
std::vector<ShapeInfo> InferWeightedSumShape(const OperatorDef& def,
                                             const std::vector<ShapeInfo>& in);
std::vector<ShapeInfo> InferWeightedSumGradientShape(const OperatorDef& def,
                                                     const std::vector<ShapeInfo>& in);

class WeightedSumOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

class WeightedSumGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TRAIN_WEIGHTED_SUM_OP_H_
