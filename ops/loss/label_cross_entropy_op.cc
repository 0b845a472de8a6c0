#include "ops/loss/label_cross_entropy_op.h"

#include <algorithm>
#include <cmath>

#include "ops/common/op_checks.h"
#include "ops/loss/class_scores.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {

ClassScores CheckLabelCrossEntropyGradientInputs(const OperatorDef& def,
                                                 const std::vector<ShapeInfo>& in) {
  const ClassScores s = CheckClassScores(def, in[0], in[1]);
  if (in[2].dtype != DType::kFloat32 || in[2].numel() != s.n) {
    ThrowInvalidArgument("dY " + DescribeBlob(def.input(2), in[2]) + " must be float32 with " +
                         std::to_string(s.n) + " elements, one per row of X " +
                         DescribeBlob(def.input(0), in[0]));
  }
  return s;
}

namespace {

std::vector<ShapeInfo> InferGradientShape(const OperatorDef& def,
                                          const std::vector<ShapeInfo>& in) {
  if (in.size() != 3) return {};  // reported by OpSchema::Verify
  CheckLabelCrossEntropyGradientInputs(def, in);
  return {in[0]};
}

GradientOps LabelCrossEntropyGradientOps(const GradientRequest& r) {
  const OperatorDef& op = r.op;
  return GradientOps{
      {MakeGradientOp(op, "LabelCrossEntropyGradient",
                      {op.input(0), op.input(1), r.output_grads[0]}, {r.input_grads[0]})},
      {true, false}};
}

}  // namespace

void LabelCrossEntropyOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kInt32});
  const std::vector<ShapeInfo> in = InputShapeInfos(*this);
  const ClassScores s = CheckClassScores(def(), in[0], in[1]);
  const int32_t* labels = Input(1).data<int32_t>();
  CheckLabelRange(def(), 1, labels, s);
  const float* x = Input(0).data<float>();
  float* y = Output(0, DType::kFloat32, {s.n})->mutable_data<float>();
  for (int64_t i = 0; i < s.n; ++i) {
    y[i] = -std::log(std::max(x[i * s.d + labels[i]], kMinLogProbability));
  }
}

void LabelCrossEntropyGradientOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kInt32});
  CheckInputType(*this, 2, {DType::kFloat32});
  const ClassScores s = CheckLabelCrossEntropyGradientInputs(def(), InputShapeInfos(*this));
  const int32_t* labels = Input(1).data<int32_t>();
  CheckLabelRange(def(), 1, labels, s);
  const float* x = Input(0).data<float>();
  const float* dy = Input(2).data<float>();
  float* dx = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
  std::fill_n(dx, s.n * s.d, 0.f);
  for (int64_t i = 0; i < s.n; ++i) {
    const int64_t at = i * s.d + labels[i];
    dx[at] = -dy[i] / std::max(x[at], kMinLogProbability);
  }
}

BRAID_OPERATOR_SCHEMA(LabelCrossEntropy)
    .NoArgs()
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 2) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      const ClassScores s = CheckClassScores(def, in[0], in[1]);
      return std::vector<ShapeInfo>{ShapeInfo{DType::kFloat32, {s.n}, true}};
    })
    .SetDoc("Y[i] = -log(X[i, label[i]]) for probabilities X [N, D] and int32 labels [N].");

BRAID_OPERATOR_SCHEMA(LabelCrossEntropyGradient)
    .ArgsOf("LabelCrossEntropy")
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference(InferGradientShape)
    .SetDoc("dX[i, label[i]] = -dY[i] / X[i, label[i]], zero elsewhere.");

BRAID_REGISTER_CPU_OPERATOR(LabelCrossEntropy, LabelCrossEntropyOp);
BRAID_REGISTER_CPU_OPERATOR(LabelCrossEntropyGradient, LabelCrossEntropyGradientOp);
BRAID_REGISTER_GRADIENT(LabelCrossEntropy, LabelCrossEntropyGradientOps);

}  // namespace braid
