#include "ops/fill/msra_fill_op.h"

#include <cmath>
#include <random>

#include "ops/fill/xavier_fill_op.h"
#include "runtime/core/op_registry.h"

namespace braid {

void MSRAFillOp::Fill(Tensor* output) {
  const int64_t fan_in = FanIn(def().output(0), output->shape());
  float* data = output->mutable_data<float>();
  if (fan_in == 0) return;
  std::normal_distribution<float> normal(0.f, std::sqrt(2.f / static_cast<float>(fan_in)));
  for (int64_t i = 0; i < output->numel(); ++i) data[i] = normal(rng());
}

BRAID_OPERATOR_SCHEMA(MSRAFill)
    .Args(FillShapeArgs())
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferFanInFillShape)
    .SetDoc("Fills the float output with N(0, 2 / fan_in) samples, fan_in = numel / shape[0].");

BRAID_REGISTER_CPU_OPERATOR(MSRAFill, MSRAFillOp);

}  // namespace braid
