// SoftmaxWithLoss: softmax followed by the (weighted) average cross entropy, float32 (Caffe2's
// SoftmaxWithLoss).
//
// Inputs: logits X, read as [N, D] split at `axis` (default 1); labels T, int32 with one entry per
// row ([N] or [N, 1]), or with `label_prob` = 1 float32 probabilities of X's shape (or [N, D]);
// optional weights W, float32 with N elements. Outputs: P = softmax(X) (X's shape) and a float32
// scalar
//   loss = scale * sum_i w_i * l_i / sum_i w_i      (w_i = 1 without W; 0 when sum_i w_i = 0)
//   l_i  = -log(max(P[i, T[i]], 1e-20))             or, with label_prob, -sum_j T[i, j] log P[i, j]
// with `scale` defaulting to 1.
//
// SoftmaxWithLossGradient: (X, T, [W,] P, dloss) -> dX = (P - onehot(T)) * w_i * scale * dloss /
// sum_i w_i (onehot(T) is T itself with label_prob). As in Caffe2, only the loss output carries a
// gradient: the maker refuses a gradient for P (use Softmax when P feeds further layers).
#ifndef BRAID_OPS_LOSS_SOFTMAX_WITH_LOSS_OP_H_
#define BRAID_OPS_LOSS_SOFTMAX_WITH_LOSS_OP_H_

#include <vector>

#include "ops/loss/class_scores.h"
#include "runtime/core/operator.h"

namespace braid {

// The checks of the schemas (shared with the CUDA kernels): the inputs X, T and, when `weighted`,
// W of SoftmaxWithLoss, or X, T, [W,] P, dloss of its gradient. Return X's rows and classes;
// throw braid::Error (InvalidArgument) naming the blobs.
ClassScores CheckSoftmaxWithLossInputs(const OperatorDef& def, const std::vector<ShapeInfo>& in,
                                       bool weighted);
ClassScores CheckSoftmaxWithLossGradientInputs(const OperatorDef& def,
                                               const std::vector<ShapeInfo>& in);

class SoftmaxWithLossOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

class SoftmaxWithLossGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_LOSS_SOFTMAX_WITH_LOSS_OP_H_
