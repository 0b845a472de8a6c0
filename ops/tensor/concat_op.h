// Concat: joins inputs of one type along `axis` (Caffe2's Concat; any element type).
//
// Inputs X0, X1, ... have equal dims except along the axis (with `add_axis` = 1: equal dims, joined
// along a new dim; see ops/tensor/concat_split.h for `axis`, `order` and `add_axis`). Outputs:
// concat_result, and split_info, an int32 [n] of each input's extent along the axis (what Split
// needs to undo it).
//   X0 [2,3], X1 [2,5]                   -> concat_result [2,8], split_info [3,5]
//   X0 [2,3], X1 [2,3], axis 0, add_axis -> concat_result [2,2,3], split_info [1,1]
//
// Gradient: Split(d concat_result, split_info) with the same arguments gives every input's
// gradient.
//
// Layouts (runtime/core/tensor.h): along the channels of NCHW float32 tensors the inputs and
// concat_result may be blocked (runtime/models/blocked_layouts.h decides), as oneDNN's
// convolutions and pooling read them: one layout throughout is the plain copy (each sample of each
// input is one contiguous piece in either layout); a mix of layouts is copied element by element.
#ifndef BRAID_OPS_TENSOR_CONCAT_OP_H_
#define BRAID_OPS_TENSOR_CONCAT_OP_H_

#include <vector>

#include "ops/tensor/concat_split.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

// The layout of Concat op `def` over its inputs; throws braid::Error naming the inputs whose types
// or dims do not fit.
AxisLayout ComputeConcatLayout(const OperatorDef& def, const std::vector<ShapeInfo>& in);

class ConcatOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_CONCAT_OP_H_
