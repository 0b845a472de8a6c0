#include "ops/fill/uniform_fill_op.h"

#include <algorithm>
#include <random>

#include "ops/common/op_checks.h"
#include "runtime/core/op_registry.h"

namespace braid {

UniformFillOp::UniformFillOp(const OperatorDef& def, Workspace* ws)
    : FillOp(def, ws, DType::kFloat32),
      min_(args().Get<float>("min", 0.f)),
      max_(args().Get<float>("max", 1.f)) {
  if (!(min_ <= max_)) {
    ThrowInvalidArgument("argument 'min' (" + std::to_string(min_) + ") must not exceed 'max' (" +
                         std::to_string(max_) + ")");
  }
}

void UniformFillOp::Fill(Tensor* output) {
  float* data = output->mutable_data<float>();
  std::uniform_real_distribution<float> uniform(min_, max_);
  // The distribution's half-open range can round up to max_; clamping keeps [min, max].
  for (int64_t i = 0; i < output->numel(); ++i) data[i] = std::min(uniform(rng()), max_);
}

BRAID_OPERATOR_SCHEMA(UniformFill)
    .Args(FillShapeArgs())
    .Arg("min", ArgKind::kFloat)
    .Arg("max", ArgKind::kFloat)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      return InferFillShape(def, in, DType::kFloat32);
    })
    .SetDoc("Fills the float output with samples uniform in [min, max], seeded per op.");

BRAID_REGISTER_CPU_OPERATOR(UniformFill, UniformFillOp);

}  // namespace braid
