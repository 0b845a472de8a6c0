// Shape rules shared by the ops that score N examples over D classes against int32 labels
// (LabelCrossEntropy, SoftmaxWithLoss, Accuracy), written once over ShapeInfo so that each op's
// schema and kernel apply the same rule with the same message.
//
// Scores X (float32) are read as a matrix [N, D] split at `axis`: N is the product of the dims
// before it, D of the rest. Labels are int32 with one entry per row: X's dims before `axis`,
// optionally followed by a 1 ([N] or [N, 1] for a 2-D X). Every label must lie in [0, D).
//
//   ClassScores s = CheckClassScores(def, x, label, 1);   // X [4, 10], label [4] -> {4, 10}
//   CheckLabelRange(def, 1, labels, s);                    // "label 'L'[2] = 12 is not in [0, 10)"
//
// All functions throw braid::Error (InvalidArgument) naming the blobs; they are pure.
#ifndef BRAID_OPS_LOSS_CLASS_SCORES_H_
#define BRAID_OPS_LOSS_CLASS_SCORES_H_

#include <cstdint>

#include "runtime/core/op_schema.h"

namespace braid {

// Probabilities are clamped to at least this before a log, as in Caffe2 (log(0) would be -inf).
constexpr float kMinLogProbability = 1e-20f;

struct ClassScores {
  int64_t n = 1;  // rows (examples)
  int64_t d = 1;  // classes
};

// Checks scores x (input 0 of `def`) split at `axis` (already canonical, 0 <= axis < ndim) and the
// labels (input 1): types and shapes as above.
ClassScores CheckClassScores(const OperatorDef& def, const ShapeInfo& x, const ShapeInfo& label,
                             int axis);
// The same with X split at axis 1 (a 1-D X is one row), as LabelCrossEntropy and Accuracy read it.
ClassScores CheckClassScores(const OperatorDef& def, const ShapeInfo& x, const ShapeInfo& label);
// Checks labels (input `label_input` of `def`, s.n entries) are in [0, s.d).
void CheckLabelRange(const OperatorDef& def, int label_input, const int32_t* labels,
                     const ClassScores& s);

}  // namespace braid

#endif  // BRAID_OPS_LOSS_CLASS_SCORES_H_
