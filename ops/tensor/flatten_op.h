// Flatten: input 0 as a matrix split at `axis` (default 1), any element type (Caffe2's Flatten):
// output [product of the dims before axis, product of the rest]; axis may equal ndim.
//   X [2,3,4]          -> [2,12]
//   X [2,3,4], axis 2  -> [6,4]
// Not in place: the gradient, ResizeLike(dY, X), reads X's shape.
#ifndef BRAID_OPS_TENSOR_FLATTEN_OP_H_
#define BRAID_OPS_TENSOR_FLATTEN_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class FlattenOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_FLATTEN_OP_H_
