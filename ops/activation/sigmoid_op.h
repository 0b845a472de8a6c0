// Sigmoid: Y = 1 / (1 + exp(-X)) elementwise, float32 (Caffe2's Sigmoid); Y may be X.
// SigmoidGradient: (Y, dY) -> dX = dY * Y * (1 - Y); dX may be dY.
#ifndef BRAID_OPS_ACTIVATION_SIGMOID_OP_H_
#define BRAID_OPS_ACTIVATION_SIGMOID_OP_H_

#include <cmath>

#include "ops/activation/unary_elementwise_op.h"

namespace braid {

struct SigmoidFunctor {
  float operator()(float x) const { return 1.f / (1.f + std::exp(-x)); }
};
struct SigmoidGradientFunctor {
  float operator()(float y, float dy) const { return dy * y * (1.f - y); }
};
using SigmoidOp = UnaryElementwiseOp<SigmoidFunctor>;
using SigmoidGradientOp = OutputGradientOp<SigmoidGradientFunctor>;

}  // namespace braid

#endif  // BRAID_OPS_ACTIVATION_SIGMOID_OP_H_
