#include "ops/activation/tanh_op.h"

#include "runtime/core/op_registry.h"

namespace braid {

namespace {

GradientOps TanhGradientOps(const GradientRequest& r) {
  return OutputBasedGradient(r, "TanhGradient");
}

}  // namespace

BRAID_OPERATOR_SCHEMA(Tanh)
    .NoArgs()
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferUnaryShape)
    .SetDoc("Y = tanh(X), elementwise.");

BRAID_OPERATOR_SCHEMA(TanhGradient)
    .ArgsOf("Tanh")
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .TensorInference(InferOutputGradientShape)
    .SetDoc("dX = dY * (1 - Y^2), from the Tanh output Y and its gradient dY.");

BRAID_REGISTER_CPU_OPERATOR(Tanh, TanhOp);
BRAID_REGISTER_CPU_OPERATOR(TanhGradient, TanhGradientOp);
BRAID_REGISTER_GRADIENT(Tanh, TanhGradientOps);

}  // namespace braid
