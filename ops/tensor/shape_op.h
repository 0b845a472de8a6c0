// Shape: the dims of input 0 as a 1-D int64 tensor (Caffe2's Shape; any element type, the data is
// not read). With `axes` (non-negative dim ids, each below the input's rank, in any order and
// repeats allowed) only those dims, in the order given. No gradient flows through it.
//
//   op { type: "Shape" input: "X" output: "dims" }                         // X [2,3,4] -> [2,3,4]
//   op { type: "Shape" input: "X" output: "hw" arg { name: "axes" ints: 2 ints: 3 } }
#ifndef BRAID_OPS_TENSOR_SHAPE_OP_H_
#define BRAID_OPS_TENSOR_SHAPE_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class ShapeOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_SHAPE_OP_H_
