// Mul: C = A * B elementwise, with Caffe2's `broadcast`/`axis` (see ops/math/elementwise_op.h).
#ifndef BRAID_OPS_MATH_MUL_OP_H_
#define BRAID_OPS_MATH_MUL_OP_H_

#include "ops/math/elementwise_op.h"

namespace braid {

struct MulFunctor {
  template <typename T>
  T operator()(T a, T b) const {
    return a * b;
  }
};
using MulOp = BinaryElementwiseOp<MulFunctor>;

}  // namespace braid

#endif  // BRAID_OPS_MATH_MUL_OP_H_
