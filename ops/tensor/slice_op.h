// Slice: Y = the box of X from `starts` to `ends` (Caffe2's Slice), any dtype.
//
// starts and ends (one int per leading dim of X, as many of each) come as arguments or, instead,
// as inputs 1 and 2 (1-D int32/int64). Dims past their length are kept whole. Caffe2's rules per
// dim of size n: a negative index i means n + 1 + i (so -1 is the end, n), an index past n is n,
// and 0 <= start <= end must hold after that.
//   X [3,4], starts [1,0], ends [-1,2] -> Y = X[1:3, 0:2], [2,2]
//   X [3,4], starts [0],   ends [1]    -> Y = X[0:1, :],   [1,4]
// Y is a new blob. With starts/ends as inputs, shape inference cannot know Y's dims.
//
// SliceGradient: inputs X (for its shape), [starts, ends,] dY, with the forward op's arguments:
// dX = zeros of X's shape with dY in the box.
#ifndef BRAID_OPS_TENSOR_SLICE_OP_H_
#define BRAID_OPS_TENSOR_SLICE_OP_H_

#include <cstdint>
#include <vector>

#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

// The box of X: its first index and size per dim.
struct SliceBox {
  std::vector<int64_t> starts;
  std::vector<int64_t> dims;
};

// The box op `def` cuts from `x` for the given starts and ends; throws braid::Error naming x when
// they do not fit.
SliceBox ComputeSliceBox(const OperatorDef& def, const ShapeInfo& x,
                         const std::vector<int64_t>& starts, const std::vector<int64_t>& ends);

class SliceOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

class SliceGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_SLICE_OP_H_
