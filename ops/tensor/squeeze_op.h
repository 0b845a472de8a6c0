// Squeeze: Y = X without the size-1 dims listed in `dims` (Caffe2's Squeeze), any dtype.
//
// `dims` (ints, required) name X's dims; Caffe2's rules: sorted, repeats ignored, no negative id,
// every named dim < X's rank and of size 1. Y may be X (in place: only the shape changes).
//   X [1,3,1,2], dims [0,2] -> Y [3,2]
// Gradient: ExpandDims(dY) with the same `dims`.
#ifndef BRAID_OPS_TENSOR_SQUEEZE_OP_H_
#define BRAID_OPS_TENSOR_SQUEEZE_OP_H_

#include <vector>

#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

// The `dims` argument of Squeeze or ExpandDims op `def`, sorted without repeats; throws
// braid::Error when it is missing or holds a negative id.
std::vector<int> SortedDimsArgument(const OperatorDef& def);
// Y's dims for X `x`; throws braid::Error naming X when a named dim is missing or not 1.
std::vector<int64_t> SqueezedDims(const OperatorDef& def, const ShapeInfo& x);

class SqueezeOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_SQUEEZE_OP_H_
