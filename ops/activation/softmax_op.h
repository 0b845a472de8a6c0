// Softmax: normalised exponentials over the dims from `axis` (default 1), float32 (Caffe2's
// Softmax).
//
// X is read as a matrix [N, D] split at `axis`: N is the product of the dims before it, D of the
// rest. Each row becomes Y[n, d] = exp(X[n, d] - m) / sum_d' exp(X[n, d'] - m), m = max_d X[n, d]
// (subtracting the row maximum keeps large logits from overflowing). Y has X's shape; Y may be X.
//   X [8, 10]                -> rows of 10
//   X [2, 3, 4], axis = 2    -> 6 rows of 4
//
// SoftmaxGradient: (Y, dY) -> dX[n, d] = Y[n, d] * (dY[n, d] - sum_d' dY[n, d'] Y[n, d']), with the
// forward op's `axis`; dX may be dY.
#ifndef BRAID_OPS_ACTIVATION_SOFTMAX_OP_H_
#define BRAID_OPS_ACTIVATION_SOFTMAX_OP_H_

#include <cstdint>

#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

struct SoftmaxSizes {
  int64_t rows = 1;
  int64_t cols = 1;
};

// The rows of op `def` (its `axis` argument, default 1) over input `x`; throws braid::Error
// naming input 0 when X is not float32 or the axis is out of range.
SoftmaxSizes ComputeSoftmaxSizes(const OperatorDef& def, const ShapeInfo& x);
// Softmax of each row of x [rows, cols] into y; y may be x.
void SoftmaxRows(const float* x, int64_t rows, int64_t cols, float* y);

class SoftmaxOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

class SoftmaxGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_ACTIVATION_SOFTMAX_OP_H_
