#include "ops/train/weighted_sum_op.h"

#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

// Checks the pairs (X_i, w_i) from input `first` on: every X_i has input 0's type (float32) and
// shape (X0 itself, or dY for the gradient), every w_i is one float32.
void CheckWeightedPairs(const OperatorDef& def, const std::vector<ShapeInfo>& in, int first) {
  const int n = static_cast<int>(in.size());
  if (n <= first || (n - first) % 2 != 0) {
    ThrowInvalidArgument("WeightedSum inputs come in pairs (X, weight), got " +
                         std::to_string(n - first) + " inputs from input " + std::to_string(first));
  }
  if (in[0].dtype != DType::kFloat32) {
    ThrowInvalidArgument("input " + DescribeBlob(def.input(0), in[0]) + " must be float32");
  }
  for (int i = first; i < n; i += 2) {
    CheckSameTypeAndShape(def, in, i);
    if (in[i + 1].dtype != DType::kFloat32 || in[i + 1].numel() != 1) {
      ThrowInvalidArgument("weight " + DescribeBlob(def.input(i + 1), in[i + 1]) +
                           " must be a float32 with one element");
    }
  }
}

}  // namespace

std::vector<ShapeInfo> InferWeightedSumShape(const OperatorDef& def,
                                             const std::vector<ShapeInfo>& in) {
  CheckWeightedPairs(def, in, 0);
  return {in[0]};
}

std::vector<ShapeInfo> InferWeightedSumGradientShape(const OperatorDef& def,
                                          const std::vector<ShapeInfo>& in) {
  CheckWeightedPairs(def, in, 1);
  const int pairs = static_cast<int>(in.size() - 1) / 2;
  if (def.output_size() != pairs && def.output_size() != 2 * pairs) {
    ThrowInvalidArgument("WeightedSumGradient writes " + std::to_string(pairs) + " or " +
                         std::to_string(2 * pairs) + " gradients, got " +
                         std::to_string(def.output_size()) + " outputs");
  }
  std::vector<ShapeInfo> out(pairs, in[0]);
  for (int k = pairs; k < def.output_size(); ++k) out.push_back(in[2 + 2 * (k - pairs)]);
  return out;
}

namespace {

GradientOps WeightedSumGradientOps(const GradientRequest& r) {
  const OperatorDef& op = r.op;
  const bool grad_on_w = ArgumentReader(op.arg()).Get<bool>("grad_on_w", false);
  std::vector<std::string> inputs{r.output_grads[0]};
  std::vector<std::string> outputs;
  std::vector<bool> has_input_grad(op.input_size(), false);
  for (int i = 0; i < op.input_size(); ++i) {
    inputs.push_back(op.input(i));
    if (i % 2 == 0) outputs.push_back(r.input_grads[i]);
    has_input_grad[i] = i % 2 == 0 || grad_on_w;
  }
  for (int i = 1; i < op.input_size() && grad_on_w; i += 2) outputs.push_back(r.input_grads[i]);
  return GradientOps{{MakeGradientOp(op, "WeightedSumGradient", inputs, outputs)}, has_input_grad};
}

}  // namespace

void WeightedSumOp::Run() {
  for (int i = 0; i < InputSize(); ++i) CheckInputType(*this, i, {DType::kFloat32});
  InferWeightedSumShape(def(), InputShapeInfos(*this));
  const int64_t n = Input(0).numel();
  float* y = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
  const float w0 = Input(1).data<float>()[0];
  const float* x0 = Input(0).data<float>();  // after mutable_data: Y may be X0
  ParallelFor(n, [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) y[j] = w0 * x0[j];
    for (int i = 2; i < InputSize(); i += 2) {
      const float w = Input(i + 1).data<float>()[0];
      const float* x = Input(i).data<float>();
      for (int64_t j = begin; j < end; ++j) y[j] += w * x[j];
    }
  });
}

void WeightedSumGradientOp::Run() {
  for (int i = 0; i < InputSize(); ++i) CheckInputType(*this, i, {DType::kFloat32});
  const std::vector<ShapeInfo> out = InferWeightedSumGradientShape(def(), InputShapeInfos(*this));
  const int pairs = (InputSize() - 1) / 2;
  const int64_t n = Input(0).numel();
  const float* dy = Input(0).data<float>();
  for (int k = 0; k < pairs; ++k) {
    const float w = Input(2 + 2 * k).data<float>()[0];
    float* dx = Output(k, DType::kFloat32, out[k].dims)->mutable_data<float>();
    for (int64_t j = 0; j < n; ++j) dx[j] = w * dy[j];
  }
  for (int k = pairs; k < OutputSize(); ++k) {
    const float* x = Input(1 + 2 * (k - pairs)).data<float>();
    double dot = 0;
    for (int64_t j = 0; j < n; ++j) dot += static_cast<double>(dy[j]) * x[j];
    *Output(k, DType::kFloat32, out[k].dims)->mutable_data<float>() = static_cast<float>(dot);
  }
}

BRAID_OPERATOR_SCHEMA(WeightedSum)
    .Arg("grad_on_w", ArgKind::kInt)
    .NumInputs(2, OpSchema::kUnbounded)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferWeightedSumShape)
    .SetDoc("Y = sum_i w_i * X_i over input pairs (X_i, w_i), w_i one-element float32 tensors.");

BRAID_OPERATOR_SCHEMA(WeightedSumGradient)
    .ArgsOf("WeightedSum")
    .NumInputs(3, OpSchema::kUnbounded)
    .NumOutputs(1, OpSchema::kUnbounded)
    .TensorInference(InferWeightedSumGradientShape)
    .SetDoc("dX_i = w_i * dY (and with grad_on_w, dw_i = sum(dY * X_i)) from dY, X0, w0, ...");

BRAID_REGISTER_CPU_OPERATOR(WeightedSum, WeightedSumOp);
BRAID_REGISTER_CPU_OPERATOR(WeightedSumGradient, WeightedSumGradientOp);
BRAID_REGISTER_GRADIENT(WeightedSum, WeightedSumGradientOps);

}  // namespace braid
