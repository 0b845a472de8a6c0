// LabelCrossEntropy: the cross entropy of probabilities against int32 labels (Caffe2's
// LabelCrossEntropy).
//
//   X     float32 [N, D] probabilities (a 1-D X [D] is one row)
//   label int32 [N] (or [N, 1]), each in [0, D)
//   Y     float32 [N], Y[i] = -log(max(X[i, label[i]], 1e-20))
//
// LabelCrossEntropyGradient: (X, label, dY) -> dX [N, D], zero except
// dX[i, label[i]] = -dY[i] / max(X[i, label[i]], 1e-20).
#ifndef BRAID_OPS_LOSS_LABEL_CROSS_ENTROPY_OP_H_
#define BRAID_OPS_LOSS_LABEL_CROSS_ENTROPY_OP_H_

#include <vector>

#include "ops/loss/class_scores.h"
#include "runtime/core/operator.h"

namespace braid {

// The gradient's input checks (X, label, dY), shared with the CUDA kernel: X's rows and classes.
ClassScores CheckLabelCrossEntropyGradientInputs(const OperatorDef& def,
                                                 const std::vector<ShapeInfo>& in);

class LabelCrossEntropyOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

class LabelCrossEntropyGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_LOSS_LABEL_CROSS_ENTROPY_OP_H_
