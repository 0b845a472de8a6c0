#include "ops/math/sum_op.h"

#include <algorithm>

#include "ops/common/dtype_dispatch.h"
#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

std::vector<ShapeInfo> InferSumShape(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  if (in.empty()) return {};  // arity is reported by OpSchema::Verify
  for (size_t i = 1; i < in.size(); ++i) CheckSameTypeAndShape(def, in, static_cast<int>(i));
  return {in[0]};
}

// Every input's gradient is dY itself. Caffe2 names it dY directly; here the autodiff chooses the
// names, so each is a Copy (which the autodiff drops when it names an input's gradient dY).
GradientOps SumGradient(const GradientRequest& r) {
  const int n = r.op.input_size();
  if (r.output_grads[0].empty()) return {{}, std::vector<bool>(n, false)};
  GradientOps grad{{}, std::vector<bool>(n, true)};
  for (int i = 0; i < n; ++i) {
    grad.ops.push_back(MakeGradientOp(r.op, "Copy", {r.output_grads[0]}, {r.input_grads[i]}));
  }
  return grad;
}

}  // namespace

void SumOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32, DType::kInt32, DType::kInt64});
  for (int i = 1; i < InputSize(); ++i) CheckInputType(*this, i, {Input(0).dtype()});
  InferSumShape(def(), InputShapeInfos(*this));
  DispatchArithmetic(Input(0).dtype(), [this](auto zero) { RunTyped<decltype(zero)>(); });
}

template <typename T>
void SumOp::RunTyped() {
  const Tensor& first = Input(0);
  const Layout layout = InputsLayout(*this);  // before the write: Y may be X0
  Tensor* output = Output(0, first.dtype(), first.shape());
  T* y = output->mutable_data<T>();
  const T* x0 = first.any_layout_data<T>();
  const T* x1 = InputSize() > 1 ? Input(1).any_layout_data<T>() : x0;
  // One pass for the common two-input case: y = x0 + x1, then += the rest.
  ParallelFor(first.numel(), [&](int64_t begin, int64_t end) {
    if (InputSize() == 1) {
      if (y != x0) std::copy(x0 + begin, x0 + end, y + begin);
      return;
    }
    for (int64_t j = begin; j < end; ++j) y[j] = x0[j] + x1[j];
    for (int i = 2; i < InputSize(); ++i) {
      const T* x = Input(i).any_layout_data<T>();
      for (int64_t j = begin; j < end; ++j) y[j] += x[j];
    }
  });
  output->set_layout(layout);
}

BRAID_OPERATOR_SCHEMA(Sum)
    .NoArgs()
    .NumInputs(1, OpSchema::kUnbounded)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferSumShape)
    .LayoutFollowsInputs()
    .SetDoc("Y = X0 + X1 + ..., elementwise over inputs of one type and shape.");

BRAID_REGISTER_CPU_OPERATOR(Sum, SumOp);
BRAID_REGISTER_GRADIENT(Sum, SumGradient);

}  // namespace braid
