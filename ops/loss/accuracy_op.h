// Accuracy: the fraction of rows whose label is among the `top_k` (default 1) highest scores
// (Caffe2's Accuracy). No gradient.
//
//   prediction float32 [N, D] (a 1-D prediction [D] is one row)
//   label      int32 [N] (or [N, 1]), each in [0, D)
//   accuracy   float32 scalar (shape []), 0 for N = 0
//
// A row counts as correct when fewer than top_k classes rank above its label, where class j ranks
// above label l if its score is higher, or equal with j < l (ties go to the lower index).
#ifndef BRAID_OPS_LOSS_ACCURACY_OP_H_
#define BRAID_OPS_LOSS_ACCURACY_OP_H_

#include <vector>

#include "ops/loss/class_scores.h"
#include "runtime/core/operator.h"

namespace braid {

// Checks `top_k` and the inputs (prediction, label), shared with the CUDA kernel: rows and classes.
ClassScores CheckAccuracyInputs(const OperatorDef& def, const std::vector<ShapeInfo>& in);

class AccuracyOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_LOSS_ACCURACY_OP_H_
