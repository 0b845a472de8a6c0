#include "ops/fill/xavier_fill_op.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "ops/common/op_checks.h"
#include "runtime/core/op_registry.h"

namespace braid {

int64_t FanIn(const std::string& output, const std::vector<int64_t>& dims) {
  if (dims.empty()) {
    ThrowInvalidArgument("cannot fill scalar '" + output + "': the fan-in needs a first dim");
  }
  return dims[0] == 0 ? 0 : SizeFromDim(dims, 1);
}

std::vector<ShapeInfo> InferFanInFillShape(const OperatorDef& def,
                                           const std::vector<ShapeInfo>& in) {
  std::vector<ShapeInfo> out = InferFillShape(def, in, DType::kFloat32);
  if (out[0].known) FanIn(def.output(0), out[0].dims);
  return out;
}

void XavierFillOp::Fill(Tensor* output) {
  const int64_t fan_in = FanIn(def().output(0), output->shape());
  float* data = output->mutable_data<float>();
  if (fan_in == 0) return;
  const float scale = std::sqrt(3.f / static_cast<float>(fan_in));
  std::uniform_real_distribution<float> uniform(-scale, scale);
  // The distribution's half-open range can round up to scale; clamping keeps [-scale, scale].
  for (int64_t i = 0; i < output->numel(); ++i) data[i] = std::min(uniform(rng()), scale);
}

BRAID_OPERATOR_SCHEMA(XavierFill)
    .Args(FillShapeArgs())
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferFanInFillShape)
    .SetDoc(
        "Fills the float output uniformly in [-sqrt(3 / fan_in), +], fan_in = numel / "
        "shape[0].");

BRAID_REGISTER_CPU_OPERATOR(XavierFill, XavierFillOp);

}  // namespace braid
