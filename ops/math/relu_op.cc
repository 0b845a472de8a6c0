#include "ops/math/relu_op.h"

#include <algorithm>

#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

std::vector<ShapeInfo> InferReluGradientShape(const OperatorDef& def,
                                              const std::vector<ShapeInfo>& in) {
  if (in.size() != 2) return {};  // arity is reported by OpSchema::Verify
  CheckSameTypeAndShape(def, in, 1);
  return {in[1]};
}

GradientOps ReluGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  return {{MakeGradientOp(r.op, "ReluGradient", {r.op.output(0), r.output_grads[0]},
                          {r.input_grads[0]})},
          {true}};
}

}  // namespace

void ReluOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  const Tensor& x = Input(0);
  const Layout layout = InputsLayout(*this);  // before the write: Y may be X
  Tensor* out = Output(0, DType::kFloat32, x.shape());
  float* y = out->mutable_data<float>();
  const float* xs = x.any_layout_data<float>();
  ParallelFor(x.numel(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = std::max(xs[i], 0.f);
  });
  out->set_layout(layout);
}

void ReluGradientOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kFloat32});
  InferReluGradientShape(def(), InputShapeInfos(*this));
  const Tensor& dy = Input(1);
  const Layout layout = InputsLayout(*this);  // before the write: dX may be dY
  Tensor* out = Output(0, DType::kFloat32, dy.shape());
  float* dx = out->mutable_data<float>();
  const float* ys = Input(0).any_layout_data<float>();
  const float* dys = dy.any_layout_data<float>();
  // Both loads unconditional, so the select compiles to a vector blend, not a branch per element
  // (a branch mispredicted on random signs made this many times slower than Relu).
  ParallelFor(dy.numel(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float d = dys[i];
      dx[i] = ys[i] > 0.f ? d : 0.f;
    }
  });
  out->set_layout(layout);
}

BRAID_OPERATOR_SCHEMA(Relu)
    .Arg("order", ArgKind::kString)  // as Caffe2's brew.relu writes it; Relu ignores it
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .LayoutFollowsInputs()
    .SetDoc("Y = max(X, 0), elementwise.");

BRAID_OPERATOR_SCHEMA(ReluGradient)
    .ArgsOf("Relu")
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .TensorInference(InferReluGradientShape)
    .LayoutFollowsInputs()
    .SetDoc("dX = dY where Y > 0, else 0; inputs Y, dY.");

BRAID_REGISTER_CPU_OPERATOR(Relu, ReluOp);
BRAID_REGISTER_CPU_OPERATOR(ReluGradient, ReluGradientOp);
BRAID_REGISTER_GRADIENT(Relu, ReluGradient);

}  // namespace braid
