// Sub: C = A - B elementwise, with Caffe2's `broadcast`/`axis` (see ops/math/elementwise_op.h).
//
// SubGradient: inputs dC and B (the forward op's arguments; B only for its shape); outputs
// dA = dC (A's shape) and dB = -dC, summed down to B's shape when B is broadcast. float32. dA may
// be dC (in place). Sub written in place of A or B keeps its gradient: B's shape is all it needs.
#ifndef BRAID_OPS_MATH_SUB_OP_H_
#define BRAID_OPS_MATH_SUB_OP_H_

#include "ops/math/elementwise_op.h"

namespace braid {

struct SubFunctor {
  template <typename T>
  T operator()(T a, T b) const {
    return a - b;
  }
};
using SubOp = BinaryElementwiseOp<SubFunctor>;

class SubGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_SUB_OP_H_
