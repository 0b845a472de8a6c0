#include "ops/fill/uniform_int_fill_op.h"

#include <random>

#include "ops/common/op_checks.h"
#include "runtime/core/op_registry.h"

namespace braid {

UniformIntFillOp::UniformIntFillOp(const OperatorDef& def, Workspace* ws)
    : FillOp(def, ws, DType::kInt32),
      min_(args().Get<int>("min", 0)),
      max_(args().Get<int>("max", 1)) {
  if (min_ > max_) {
    ThrowInvalidArgument("argument 'min' (" + std::to_string(min_) + ") must not exceed 'max' (" +
                         std::to_string(max_) + ")");
  }
}

void UniformIntFillOp::Fill(Tensor* output) {
  int32_t* data = output->mutable_data<int32_t>();
  std::uniform_int_distribution<int32_t> uniform(min_, max_);
  for (int64_t i = 0; i < output->numel(); ++i) data[i] = uniform(rng());
}

BRAID_OPERATOR_SCHEMA(UniformIntFill)
    .Args(FillShapeArgs())
    .Arg("min", ArgKind::kInt)
    .Arg("max", ArgKind::kInt)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      return InferFillShape(def, in, DType::kInt32);
    })
    .SetDoc("Fills the int32 output with integers uniform in [min, max], seeded per op.");

BRAID_REGISTER_CPU_OPERATOR(UniformIntFill, UniformIntFillOp);

}  // namespace braid
