#include "ops/math/clip_op.h"

#include <algorithm>
#include <limits>
#include <string>

#include "ops/activation/unary_elementwise_op.h"
#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {

ClipBounds ClipBoundsOf(const OperatorDef& def) {
  const ArgumentReader args(def.arg());
  const ClipBounds bounds{args.Get<float>("min", std::numeric_limits<float>::lowest()),
                          args.Get<float>("max", std::numeric_limits<float>::max())};
  if (!(bounds.min <= bounds.max)) {
    ThrowInvalidArgument("argument 'min' = " + std::to_string(bounds.min) +
                         " must not exceed argument 'max' = " + std::to_string(bounds.max));
  }
  return bounds;
}

void ClipOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  const Tensor& x = Input(0);
  const Layout layout = InputsLayout(*this);  // before the write: Y may be X
  Tensor* out = Output(0, DType::kFloat32, x.shape());
  float* y = out->mutable_data<float>();
  const float* xs = x.any_layout_data<float>();  // after mutable_data: Y may be X
  const ClipBounds b = bounds_;
  ParallelFor(x.numel(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = std::min(std::max(xs[i], b.min), b.max);
  });
  out->set_layout(layout);
}

void ClipGradientOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kFloat32});
  InferOutputGradientShape(def(), InputShapeInfos(*this));
  const Layout layout = InputsLayout(*this);  // before the write: dX may be dY
  Tensor* out = Output(0, DType::kFloat32, Input(0).shape());
  float* dx = out->mutable_data<float>();
  const float* y = Input(0).any_layout_data<float>();  // after mutable_data: dX may be dY
  const float* dy = Input(1).any_layout_data<float>();
  const ClipBounds b = bounds_;
  ParallelFor(Input(0).numel(), [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dx[i] = y[i] > b.min && y[i] < b.max ? dy[i] : 0.f;
  });
  out->set_layout(layout);
}

namespace {

GradientOps ClipGradientOps(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  return OutputBasedGradient(r, "ClipGradient");
}

}  // namespace

BRAID_OPERATOR_SCHEMA(Clip)
    .Arg("min", ArgKind::kFloat)
    .Arg("max", ArgKind::kFloat)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .LayoutFollowsInputs()
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      ClipBoundsOf(def);
      return InferUnaryShape(def, in);
    })
    .SetDoc("Y = min(max(X, `min`), `max`), elementwise.");

BRAID_OPERATOR_SCHEMA(ClipGradient)
    .ArgsOf("Clip")
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .LayoutFollowsInputs()
    .TensorInference(InferOutputGradientShape)
    .SetDoc("dX = dY where `min` < Y < `max`, else 0, from the Clip output Y and its gradient dY.");

BRAID_REGISTER_CPU_OPERATOR(Clip, ClipOp);
BRAID_REGISTER_CPU_OPERATOR(ClipGradient, ClipGradientOp);
BRAID_REGISTER_GRADIENT(Clip, ClipGradientOps);

}  // namespace braid
