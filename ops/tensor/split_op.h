// Split: cuts input 0 along `axis` into one piece per output (Caffe2's Split; any element type).
//
// The pieces' extents along the axis come from, in order: the optional second input (a 1-D int32
// or int64 tensor, e.g. Concat's split_info), the `split` argument (ints), or an equal split of the
// axis among the outputs. Giving both the input and the argument is an error; the extents must sum
// to the axis. See ops/tensor/concat_split.h for `axis`, `order` and `add_axis` (with add_axis
// every extent is 1 and the outputs lose that dim).
//   input [2,8], split [3,5]            -> [2,3], [2,5]
//   input [6,4], axis 0, 3 outputs      -> [2,4], [2,4], [2,4]
// Output shapes depend on the second input's contents, so with one they are unknown to shape
// inference.
//
// Gradient: Concat of the outputs' gradients into the input's (its split_info goes to
// "<input>_grad_split_info"); an output without a gradient contributes zeros, ConstantFill'd into
// "<output>_grad_zeros".
#ifndef BRAID_OPS_TENSOR_SPLIT_OP_H_
#define BRAID_OPS_TENSOR_SPLIT_OP_H_

#include <cstdint>
#include <vector>

#include "ops/tensor/concat_split.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

// The layout of Split op `def` over `input`, with `sizes` read from its second input (empty: from
// the `split` argument or an equal split); throws braid::Error naming the input for sizes that do
// not fit.
AxisLayout ComputeSplitLayout(const OperatorDef& def, const ShapeInfo& input,
                              std::vector<int64_t> sizes);

class SplitOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_SPLIT_OP_H_
