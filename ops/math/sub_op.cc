#include "ops/math/sub_op.h"

#include <algorithm>
#include <vector>

#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

std::vector<ShapeInfo> InferSubGradientShape(const OperatorDef& def,
                                             const std::vector<ShapeInfo>& in) {
  if (in.size() != 2) return {};  // arity is reported by OpSchema::Verify
  ElementwiseBroadcast(def, in[0], in[1]);
  return {in[0], in[1]};
}

GradientOps SubGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false, false}};
  return {{MakeGradientOp(r.op, "SubGradient", {r.output_grads[0], r.op.input(1)},
                          {r.input_grads[0], r.input_grads[1]})},
          {true, true}};
}

}  // namespace

void SubGradientOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kFloat32});
  const Tensor& dc = Input(0);
  const BroadcastSizes s = ElementwiseBroadcast(def(), ShapeOf(dc), ShapeOf(Input(1)));
  // dB first: dA may be dC.
  float* db = Output(1, DType::kFloat32, Input(1).shape())->mutable_data<float>();
  ReduceOverBroadcast(s, dc.data<float>(), -1.0, db);
  const float* dcs = dc.data<float>();
  float* da = Output(0, DType::kFloat32, dc.shape())->mutable_data<float>();
  if (da != dcs) std::copy_n(dcs, dc.numel(), da);
}

BRAID_OPERATOR_SCHEMA(Sub)
    .Arg("broadcast", ArgKind::kInt)
    .Arg("axis", ArgKind::kInt)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}, {1, 0}})
    .TensorInference(InferElementwiseShape)
    .SetDoc("C = A - B, elementwise; broadcast=1 repeats B over A from `axis`.");

BRAID_OPERATOR_SCHEMA(SubGradient)
    .ArgsOf("Sub")
    .NumInputs(2)
    .NumOutputs(2)
    .AllowInplace({{0, 0}})
    .TensorInference(InferSubGradientShape)
    .SetDoc("Sub's gradient: inputs dC, B; outputs dA = dC, dB = -dC summed down to B's shape.");

BRAID_REGISTER_CPU_OPERATOR(Sub, SubOp);
BRAID_REGISTER_CPU_OPERATOR(SubGradient, SubGradientOp);
BRAID_REGISTER_GRADIENT(Sub, SubGradient);

}  // namespace braid
