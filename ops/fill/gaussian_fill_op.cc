#include "ops/fill/gaussian_fill_op.h"

#include <algorithm>
#include <random>

#include "ops/common/op_checks.h"
#include "runtime/core/op_registry.h"

namespace braid {

GaussianFillOp::GaussianFillOp(const OperatorDef& def, Workspace* ws)
    : FillOp(def, ws, DType::kFloat32),
      mean_(args().Get<float>("mean", 0.f)),
      std_(args().Get<float>("std", 1.f)) {
  if (!(std_ >= 0))
    ThrowInvalidArgument("argument 'std' must be >= 0, got " + std::to_string(std_));
}

void GaussianFillOp::Fill(Tensor* output) {
  float* data = output->mutable_data<float>();
  if (std_ == 0) {
    std::fill_n(data, output->numel(), mean_);
    return;
  }
  std::normal_distribution<float> normal(mean_, std_);
  for (int64_t i = 0; i < output->numel(); ++i) data[i] = normal(rng());
}

BRAID_OPERATOR_SCHEMA(GaussianFill)
    .Args(FillShapeArgs())
    .Arg("mean", ArgKind::kFloat)
    .Arg("std", ArgKind::kFloat)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      return InferFillShape(def, in, DType::kFloat32);
    })
    .SetDoc("Fills the float output with samples of N(mean, std^2), seeded per op.");

BRAID_REGISTER_CPU_OPERATOR(GaussianFill, GaussianFillOp);

}  // namespace braid
