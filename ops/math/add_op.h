// Add: C = A + B elementwise, with Caffe2's `broadcast`/`axis` (see ops/math/elementwise_op.h).
// Gradient: dA = dC (a Copy); dB = dC, or SumReduceLike(dC, B) when broadcast=1.
#ifndef BRAID_OPS_MATH_ADD_OP_H_
#define BRAID_OPS_MATH_ADD_OP_H_

#include "ops/math/elementwise_op.h"

namespace braid {

struct AddFunctor {
  template <typename T>
  T operator()(T a, T b) const {
    return a + b;
  }
};
using AddOp = BinaryElementwiseOp<AddFunctor>;

}  // namespace braid

#endif  // BRAID_OPS_MATH_ADD_OP_H_
