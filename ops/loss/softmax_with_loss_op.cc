#include "ops/loss/softmax_with_loss_op.h"

#include <algorithm>
#include <cmath>

#include "ops/activation/softmax_op.h"
#include "ops/common/op_checks.h"
#include "ops/loss/class_scores.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

bool LabelProb(const OperatorDef& def) {
  return ArgumentReader(def.arg()).Get<bool>("label_prob", false);
}

}  // namespace

ClassScores CheckSoftmaxWithLossInputs(const OperatorDef& def, const std::vector<ShapeInfo>& in,
                                       bool weighted) {
  const SoftmaxSizes rows = ComputeSoftmaxSizes(def, in[0]);
  ClassScores s{rows.rows, rows.cols};
  if (!LabelProb(def)) {
    const int axis = CanonicalAxis(def, "axis", 1, static_cast<int>(in[0].dims.size()));
    s = CheckClassScores(def, in[0], in[1], axis);
  } else if (in[1].dtype != DType::kFloat32 ||
             (in[1].dims != in[0].dims && in[1].dims != std::vector<int64_t>{s.n, s.d})) {
    ThrowInvalidArgument("label_prob = 1: T " + DescribeBlob(def.input(1), in[1]) +
                         " must be float32 probabilities shaped like X " +
                         DescribeBlob(def.input(0), in[0]) +
                         " or [N, D] = " + DimsText({s.n, s.d}));
  }
  if (weighted && (in[2].dtype != DType::kFloat32 || in[2].numel() != s.n)) {
    ThrowInvalidArgument("weights " + DescribeBlob(def.input(2), in[2]) + " must be float32 with " +
                         std::to_string(s.n) + " elements, one per row of X " +
                         DescribeBlob(def.input(0), in[0]));
  }
  return s;
}

ClassScores CheckSoftmaxWithLossGradientInputs(const OperatorDef& def,
                                               const std::vector<ShapeInfo>& in) {
  const int p = static_cast<int>(in.size()) - 2;
  const ClassScores s = CheckSoftmaxWithLossInputs(def, in, p == 3);
  CheckSameTypeAndShape(def, in, p);
  if (in[p + 1].dtype != DType::kFloat32 || in[p + 1].numel() != 1) {
    ThrowInvalidArgument("dloss " + DescribeBlob(def.input(p + 1), in[p + 1]) +
                         " must be a float32 scalar (one element)");
  }
  return s;
}

namespace {

std::vector<ShapeInfo> InferLossShape(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  if (in.size() < 2 || in.size() > 3) return {};  // reported by OpSchema::Verify
  CheckSoftmaxWithLossInputs(def, in, in.size() == 3);
  return {in[0], ShapeInfo{DType::kFloat32, {}, true}};
}

std::vector<ShapeInfo> InferGradientShape(const OperatorDef& def,
                                          const std::vector<ShapeInfo>& in) {
  if (in.size() < 4 || in.size() > 5) return {};  // reported by OpSchema::Verify
  CheckSoftmaxWithLossGradientInputs(def, in);
  return {in[0]};
}

void CheckLabels(const OperatorBase& op, const ClassScores& s) {
  if (LabelProb(op.def())) return;
  CheckLabelRange(op.def(), 1, op.Input(1).data<int32_t>(), s);
}

double TotalWeight(const float* weights, int64_t n) {
  if (weights == nullptr) return static_cast<double>(n);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) total += weights[i];
  return total;
}

GradientOps SoftmaxWithLossGradientOps(const GradientRequest& r) {
  const OperatorDef& op = r.op;
  if (!r.output_grads[0].empty()) {
    ThrowInvalidArgument("SoftmaxWithLoss passes a gradient only from its loss '" + op.output(1) +
                         "', but its softmax output '" + op.output(0) +
                         "' also needs one; use Softmax for a softmax that feeds other layers");
  }
  std::vector<std::string> inputs(op.input().begin(), op.input().end());
  inputs.push_back(op.output(0));
  inputs.push_back(r.output_grads[1]);
  std::vector<bool> has_input_grad(op.input_size(), false);
  has_input_grad[0] = true;
  return GradientOps{{MakeGradientOp(op, "SoftmaxWithLossGradient", inputs, {r.input_grads[0]})},
                     has_input_grad};
}

}  // namespace

void SoftmaxWithLossOp::Run() {
  const bool label_prob = LabelProb(def());
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {label_prob ? DType::kFloat32 : DType::kInt32});
  if (InputSize() == 3) CheckInputType(*this, 2, {DType::kFloat32});
  const ClassScores s = CheckSoftmaxWithLossInputs(def(), InputShapeInfos(*this), InputSize() == 3);
  CheckLabels(*this, s);
  float* p = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
  SoftmaxRows(Input(0).data<float>(), s.n, s.d, p);
  const float* probs = label_prob ? Input(1).data<float>() : nullptr;
  const int32_t* labels = label_prob ? nullptr : Input(1).data<int32_t>();
  const float* weights = InputSize() == 3 ? Input(2).data<float>() : nullptr;
  double loss = 0;
  for (int64_t i = 0; i < s.n; ++i) {
    const float* pi = p + i * s.d;
    double row_loss = 0;
    if (probs != nullptr) {
      for (int64_t j = 0; j < s.d; ++j) {
        row_loss -= probs[i * s.d + j] * std::log(std::max(pi[j], kMinLogProbability));
      }
    } else {
      row_loss = -std::log(std::max(pi[labels[i]], kMinLogProbability));
    }
    loss += (weights ? weights[i] : 1.f) * row_loss;
  }
  const double total = TotalWeight(weights, s.n);
  const float scale = args().Get<float>("scale", 1.f);
  *Output(1, DType::kFloat32, {})->mutable_data<float>() =
      total != 0 ? static_cast<float>(loss * scale / total) : 0.f;
}

void SoftmaxWithLossGradientOp::Run() {
  const bool label_prob = LabelProb(def());
  for (int i = 0; i < InputSize(); ++i) {
    CheckInputType(*this, i, {i == 1 && !label_prob ? DType::kInt32 : DType::kFloat32});
  }
  const ClassScores s = CheckSoftmaxWithLossGradientInputs(def(), InputShapeInfos(*this));
  CheckLabels(*this, s);
  const int p_index = InputSize() - 2;
  const float* weights = p_index == 3 ? Input(2).data<float>() : nullptr;
  const double total = TotalWeight(weights, s.n);
  const double dloss = Input(p_index + 1).data<float>()[0];
  const float g =
      total != 0 ? static_cast<float>(args().Get<float>("scale", 1.f) * dloss / total) : 0.f;
  const float* p = Input(p_index).data<float>();
  const float* probs = label_prob ? Input(1).data<float>() : nullptr;
  const int32_t* labels = label_prob ? nullptr : Input(1).data<int32_t>();
  float* dx = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
  for (int64_t i = 0; i < s.n; ++i) {
    const float row_g = (weights ? weights[i] : 1.f) * g;
    const int64_t base = i * s.d;
    for (int64_t j = 0; j < s.d; ++j) {
      const float target = probs ? probs[base + j] : static_cast<float>(j == labels[i]);
      dx[base + j] = (p[base + j] - target) * row_g;
    }
  }
}

BRAID_OPERATOR_SCHEMA(SoftmaxWithLoss)
    .Arg("axis", ArgKind::kInt)
    .Arg("label_prob", ArgKind::kInt)
    .Arg("scale", ArgKind::kFloat)
    .NumInputs(2, 3)
    .NumOutputs(2)
    .TensorInference(InferLossShape)
    .SetDoc("P = softmax(X) over `axis`; loss = scale * weighted mean of -log P[i, label[i]].");

BRAID_OPERATOR_SCHEMA(SoftmaxWithLossGradient)
    .ArgsOf("SoftmaxWithLoss")
    .NumInputs(4, 5)
    .NumOutputs(1)
    .TensorInference(InferGradientShape)
    .SetDoc("dX = (P - onehot(T)) * w_i * scale * dloss / sum(w), from X, T, [W,] P, dloss.");

BRAID_REGISTER_CPU_OPERATOR(SoftmaxWithLoss, SoftmaxWithLossOp);
BRAID_REGISTER_CPU_OPERATOR(SoftmaxWithLossGradient, SoftmaxWithLossGradientOp);
BRAID_REGISTER_GRADIENT(SoftmaxWithLoss, SoftmaxWithLossGradientOps);

}  // namespace braid
