// Transpose: Y = X with its dims permuted by `axes` (Caffe2's Transpose), any dtype.
//
// `axes` (ints) is a permutation of [0, rank): Y's dim i is X's dim axes[i], and
// Y[i_0, ..., i_n] = X at index i_k in dim axes[k]. Without `axes` the dims are reversed.
//   X [2,3,4], axes [1,0,2] -> Y [3,2,4]
//   X [2,3]                 -> Y [3,2] (the matrix transpose)
// Y is a new blob. Gradient: Transpose(dY) by the inverse permutation.
//
// TransposeTensor is the one kernel every layout transpose uses (NCHW2NHWC, NHWC2NCHW): it merges
// dims that stay adjacent, copies runs that stay contiguous, and transposes the remaining
// [batch, rows, cols] -> [batch, cols, rows] case (the layout transposes) in cache-sized tiles.
#ifndef BRAID_OPS_TENSOR_TRANSPOSE_OP_H_
#define BRAID_OPS_TENSOR_TRANSPOSE_OP_H_

#include <vector>

#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

// `axes` of Transpose op `def` for an input of `ndim` dims (reversed when absent); throws
// braid::Error naming input `x` when it is not a permutation of [0, ndim).
std::vector<int> TransposeAxes(const OperatorDef& def, const ShapeInfo& x);
// The dims of x permuted: result[i] = x.dims[perm[i]].
std::vector<int64_t> PermutedDims(const std::vector<int64_t>& dims, const std::vector<int>& perm);
// Writes x permuted by `perm` (a valid permutation of its dims) into *y, resized; y is not &x.
void TransposeTensor(const Tensor& x, const std::vector<int>& perm, Tensor* y);

class TransposeOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_TRANSPOSE_OP_H_
