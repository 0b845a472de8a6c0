#include "ops/activation/softmax_op.h"

#include <algorithm>
#include <cmath>

#include "ops/activation/unary_elementwise_op.h"
#include "ops/common/op_checks.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {

SoftmaxSizes ComputeSoftmaxSizes(const OperatorDef& def, const ShapeInfo& x) {
  InferUnaryShape(def, {x});
  const int ndim = static_cast<int>(x.dims.size());
  if (ndim == 0) {
    ThrowInvalidArgument("input " + DescribeBlob(def.input(0), x) + " needs at least one dim");
  }
  const int axis = CanonicalAxis(def, "axis", 1, ndim);
  return {SizeToDim(x.dims, axis), SizeFromDim(x.dims, axis)};
}

void SoftmaxRows(const float* x, int64_t rows, int64_t cols, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    const float max = cols > 0 ? *std::max_element(xr, xr + cols) : 0.f;
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      yr[c] = std::exp(xr[c] - max);
      sum += yr[c];
    }
    const float inverse = static_cast<float>(1.0 / sum);
    for (int64_t c = 0; c < cols; ++c) yr[c] *= inverse;
  }
}

void SoftmaxOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  const Tensor& x = Input(0);
  const SoftmaxSizes s = ComputeSoftmaxSizes(def(), ShapeOf(x));
  float* y = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
  SoftmaxRows(x.data<float>(), s.rows, s.cols, y);
}

void SoftmaxGradientOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kFloat32});
  InferOutputGradientShape(def(), InputShapeInfos(*this));
  const SoftmaxSizes s = ComputeSoftmaxSizes(def(), ShapeOf(Input(0)));
  float* dx = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
  const float* y = Input(0).data<float>();  // after mutable_data: dX may be dY
  const float* dy = Input(1).data<float>();
  for (int64_t r = 0; r < s.rows; ++r) {
    const int64_t base = r * s.cols;
    double dot = 0;
    for (int64_t c = 0; c < s.cols; ++c) dot += static_cast<double>(dy[base + c]) * y[base + c];
    for (int64_t c = 0; c < s.cols; ++c) {
      dx[base + c] = y[base + c] * (dy[base + c] - static_cast<float>(dot));
    }
  }
}

namespace {

GradientOps SoftmaxGradientOps(const GradientRequest& r) {
  return OutputBasedGradient(r, "SoftmaxGradient");
}

}  // namespace

BRAID_OPERATOR_SCHEMA(Softmax)
    .Arg("axis", ArgKind::kInt)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 1) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      ComputeSoftmaxSizes(def, in[0]);
      return in;
    })
    .SetDoc("Y = exp(X) / sum(exp(X)) over the dims from `axis` (default 1), row by row.");

BRAID_OPERATOR_SCHEMA(SoftmaxGradient)
    .ArgsOf("Softmax")
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      std::vector<ShapeInfo> out = InferOutputGradientShape(def, in);
      if (!out.empty()) ComputeSoftmaxSizes(def, in[0]);
      return out;
    })
    .SetDoc("dX = Y * (dY - sum(dY * Y)) per row, from the Softmax output Y and its gradient dY.");

BRAID_REGISTER_CPU_OPERATOR(Softmax, SoftmaxOp);
BRAID_REGISTER_CPU_OPERATOR(SoftmaxGradient, SoftmaxGradientOp);
BRAID_REGISTER_GRADIENT(Softmax, SoftmaxGradientOps);

}  // namespace braid
