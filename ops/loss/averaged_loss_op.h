// AveragedLoss: Y = mean of all elements of X, a float32 scalar (shape []) (Caffe2's
// AveragedLoss). The mean of an empty X is 0.
//
// AveragedLossGradient: (X, dY) -> dX with X's shape, every element dY / numel(X).
#ifndef BRAID_OPS_LOSS_AVERAGED_LOSS_OP_H_
#define BRAID_OPS_LOSS_AVERAGED_LOSS_OP_H_

#include <vector>

#include "runtime/core/operator.h"

namespace braid {

// The gradient's shape inference and input checks (X, dY), shared with the CUDA kernel.
std::vector<ShapeInfo> InferAveragedLossGradientShape(const OperatorDef& def,
                                                      const std::vector<ShapeInfo>& in);

class AveragedLossOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

class AveragedLossGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_LOSS_AVERAGED_LOSS_OP_H_
