// Tanh: Y = tanh(X) elementwise, float32 (Caffe2's Tanh); Y may be X.
// TanhGradient: (Y, dY) -> dX = dY * (1 - Y^2); dX may be dY.
#ifndef BRAID_OPS_ACTIVATION_TANH_OP_H_
#define BRAID_OPS_ACTIVATION_TANH_OP_H_

#include <cmath>

#include "ops/activation/unary_elementwise_op.h"

namespace braid {

struct TanhFunctor {
  float operator()(float x) const { return std::tanh(x); }
};
struct TanhGradientFunctor {
  float operator()(float y, float dy) const { return dy * (1.f - y * y); }
};
using TanhOp = UnaryElementwiseOp<TanhFunctor>;
using TanhGradientOp = OutputGradientOp<TanhGradientFunctor>;

}  // namespace braid

#endif  // BRAID_OPS_ACTIVATION_TANH_OP_H_
