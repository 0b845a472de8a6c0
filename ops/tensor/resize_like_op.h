// ResizeLike: input 0's type and data with input 1's shape (Caffe2's ResizeLike; any element
// type). Both must have as many elements; the output may be input 0 (in place). Flatten's gradient.
//
// Gradient: ResizeLike(dY, data) gives dY input 0's shape back; input 1 (only a shape) gets none.
// An in-place ResizeLike has no gradient (its input's shape is gone); the maker says so.
#ifndef BRAID_OPS_TENSOR_RESIZE_LIKE_OP_H_
#define BRAID_OPS_TENSOR_RESIZE_LIKE_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class ResizeLikeOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_RESIZE_LIKE_OP_H_
