// ExpandDims: Y = X with size-1 dims inserted at the ids in `dims` (Caffe2's ExpandDims), any
// dtype.
//
// `dims` (ints, required) are Y's dim ids; Caffe2's rules: sorted, repeats ignored, no negative
// id, and the largest < X's rank + the number of ids. Y may be X (in place: only the shape
// changes).
//   X [3,2], dims [0,2] -> Y [1,3,1,2]
// Gradient: Squeeze(dY) with the same `dims`.
#ifndef BRAID_OPS_TENSOR_EXPAND_DIMS_OP_H_
#define BRAID_OPS_TENSOR_EXPAND_DIMS_OP_H_

#include <vector>

#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

// Y's dims for X `x`; throws braid::Error naming X when `dims` does not fit it.
std::vector<int64_t> ExpandedDims(const OperatorDef& def, const ShapeInfo& x);

class ExpandDimsOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_EXPAND_DIMS_OP_H_
