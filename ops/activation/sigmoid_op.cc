#include "ops/activation/sigmoid_op.h"

#include "runtime/core/op_registry.h"

namespace braid {

namespace {

GradientOps SigmoidGradientOps(const GradientRequest& r) {
  return OutputBasedGradient(r, "SigmoidGradient");
}

}  // namespace

BRAID_OPERATOR_SCHEMA(Sigmoid)
    .NoArgs()
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferUnaryShape)
    .SetDoc("Y = 1 / (1 + exp(-X)), elementwise.");

BRAID_OPERATOR_SCHEMA(SigmoidGradient)
    .ArgsOf("Sigmoid")
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .TensorInference(InferOutputGradientShape)
    .SetDoc("dX = dY * Y * (1 - Y), from the Sigmoid output Y and its gradient dY.");

BRAID_REGISTER_CPU_OPERATOR(Sigmoid, SigmoidOp);
BRAID_REGISTER_CPU_OPERATOR(SigmoidGradient, SigmoidGradientOp);
BRAID_REGISTER_GRADIENT(Sigmoid, SigmoidGradientOps);

}  // namespace braid
