// Mul: C = A * B elementwise, with Caffe2's `broadcast`/`axis` (see ops/math/elementwise_op.h).
//
// MulGradient: inputs A, B, dC (the forward op's arguments); outputs dA = dC * B (A's shape) and
// dB = dC * A summed down to B's shape (accumulated in double), float32. The gradient needs A and
// B, so a Mul written in place of one of its inputs has no gradient (building it throws).
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

class MulGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_MUL_OP_H_
