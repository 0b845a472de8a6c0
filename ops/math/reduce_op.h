// ReduceSum and ReduceMean: Y = the sum / mean of X over `axes` (Caffe2's ReduceSum, ReduceMean).
//
// `axes` (ints; negative counts from the end; default every axis; no axis twice) are reduced;
// `keepdims` (default 1) keeps them as dims of size 1, else drops them:
//   X [2,3,4], axes [1]               -> Y [2,1,4], Y[i,0,k] = sum_j X[i,j,k]
//   X [2,3,4], axes [0,-1], keepdims 0 -> Y [3]
// ReduceSum takes float32 (accumulated in double), int32 or int64 (accumulated in int64, wrapping
// to the type); ReduceMean float32, and refuses to average over no elements. Y is a new blob.
//
// Gradients: ReduceSumGradient / ReduceMeanGradient, inputs dY and X (X for its shape only), with
// the forward op's arguments: dX[x] = dY[y(x)] (divided by the count averaged, for the mean).
#ifndef BRAID_OPS_MATH_REDUCE_OP_H_
#define BRAID_OPS_MATH_REDUCE_OP_H_

#include <cstdint>
#include <vector>

#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

// X viewed with runs of adjacent kept or adjacent reduced dims merged: X's element at merged index
// (i_0, ..., i_k) sums into Y's element sum_d i_d * y_strides[d] (y_strides[d] = 0 when reduced).
struct ReducePlan {
  std::vector<int64_t> y_dims;     // Y's shape (with or without the kept 1-dims)
  std::vector<int64_t> x_dims;     // merged dims of X
  std::vector<int64_t> y_strides;  // per merged dim
  int64_t reduced_count = 1;       // elements summed into each Y element
};

// The reduction of op `def` over input `x`; throws braid::Error naming the op's input 0 and the
// argument when `axes` does not fit x.
ReducePlan PlanReduce(const OperatorDef& def, const ShapeInfo& x);

// kMean: ReduceMean, else ReduceSum.
template <bool kMean>
class ReduceOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

template <bool kMean>
class ReduceGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_REDUCE_OP_H_
