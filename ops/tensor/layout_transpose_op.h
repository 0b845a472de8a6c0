// NCHW2NHWC and NHWC2NCHW: move the channel dim of an image batch (Caffe2's ops of these names),
// any dtype, X of rank >= 3 (N, C, spatial dims... or N, spatial dims..., C):
//   NCHW2NHWC: X [N,C,H,W] -> Y [N,H,W,C]      NHWC2NCHW: X [N,H,W,C] -> Y [N,C,H,W]
// Both are Transpose by a fixed permutation (ops/tensor/transpose_op.h, whose kernel transposes
// them tile by tile). Y is a new blob. Gradients: each other.
#ifndef BRAID_OPS_TENSOR_LAYOUT_TRANSPOSE_OP_H_
#define BRAID_OPS_TENSOR_LAYOUT_TRANSPOSE_OP_H_

#include <vector>

#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

// The permutation of op `def` (NCHW2NHWC when to_nhwc) over input x; throws braid::Error naming x
// when it has fewer than 3 dims.
std::vector<int> LayoutTransposeAxes(const OperatorDef& def, const ShapeInfo& x, bool to_nhwc);

template <bool kToNHWC>
class LayoutTransposeOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_LAYOUT_TRANSPOSE_OP_H_
