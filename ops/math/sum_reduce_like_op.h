// SumReduceLike: C = A summed down to B's shape, the reverse of the legacy broadcast of Add and Mul
// (Caffe2's SumReduceLike, used for the gradient of a broadcast B).
//
// With the same `broadcast`/`axis` arguments as the elementwise op (see ops/math/elementwise_op.h),
// A is viewed as [outer, inner_b, inner] and B as [inner_b]: C[j] = sum over o, p of A[o, j, p],
// accumulated in double. C gets B's shape; when A and B have one shape, C is a copy of A. float32.
//
//   A [2,3,4], B [3], broadcast=1, axis=1   -> C [3], C[j] = sum_{i,k} A[i,j,k]
#ifndef BRAID_OPS_MATH_SUM_REDUCE_LIKE_OP_H_
#define BRAID_OPS_MATH_SUM_REDUCE_LIKE_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class SumReduceLikeOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_SUM_REDUCE_LIKE_OP_H_
