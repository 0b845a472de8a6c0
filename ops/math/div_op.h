// Div: C = A / B elementwise, with Caffe2's `broadcast`/`axis` (see ops/math/elementwise_op.h).
// Integer division truncates toward zero (as C++ and Caffe2 do); an integer B holding a 0 is
// refused, and min / -1 wraps to min rather than overflowing.
//
// DivGradient: inputs C, B, dC (the forward op's arguments); outputs dA = dC / B (A's shape) and
// dB = -dC * C / B summed down to B's shape (accumulated in double), float32. It needs the output
// C and B, so a Div written in place of B has no gradient (building it throws); C may be A.
#ifndef BRAID_OPS_MATH_DIV_OP_H_
#define BRAID_OPS_MATH_DIV_OP_H_

#include <type_traits>

#include "ops/math/elementwise_op.h"

namespace braid {

struct DivFunctor {
  static constexpr bool kDividesByB = true;
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == -1) return static_cast<T>(std::make_unsigned_t<T>{0} - std::make_unsigned_t<T>(a));
    }
    return a / b;
  }
};
using DivOp = BinaryElementwiseOp<DivFunctor>;

class DivGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_DIV_OP_H_
