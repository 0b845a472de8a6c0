#include "ops/loss/accuracy_op.h"

#include "ops/common/op_checks.h"
#include "ops/loss/class_scores.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {

ClassScores CheckAccuracyInputs(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  const int top_k = ArgumentReader(def.arg()).Get<int>("top_k", 1);
  if (top_k < 1)
    ThrowInvalidArgument("argument 'top_k' must be >= 1, got " + std::to_string(top_k));
  return CheckClassScores(def, in[0], in[1]);
}

namespace {

// Whether fewer than top_k scores rank above the label's (ties go to the lower index).
bool InTopK(const float* scores, int64_t d, int32_t label, int top_k) {
  int above = 0;
  for (int64_t j = 0; j < d && above < top_k; ++j) {
    if (scores[j] > scores[label] || (scores[j] == scores[label] && j < label)) ++above;
  }
  return above < top_k;
}

}  // namespace

void AccuracyOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kInt32});
  const ClassScores s = CheckAccuracyInputs(def(), InputShapeInfos(*this));
  const int32_t* labels = Input(1).data<int32_t>();
  CheckLabelRange(def(), 1, labels, s);
  const int top_k = args().Get<int>("top_k", 1);
  const float* x = Input(0).data<float>();
  int64_t correct = 0;
  for (int64_t i = 0; i < s.n; ++i) correct += InTopK(x + i * s.d, s.d, labels[i], top_k);
  *Output(0, DType::kFloat32, {})->mutable_data<float>() =
      s.n > 0 ? static_cast<float>(correct) / static_cast<float>(s.n) : 0.f;
}

BRAID_OPERATOR_SCHEMA(Accuracy)
    .Arg("top_k", ArgKind::kInt)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 2) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      CheckAccuracyInputs(def, in);
      return std::vector<ShapeInfo>{ShapeInfo{DType::kFloat32, {}, true}};
    })
    .SetDoc("The fraction of rows whose label is among the top_k scores of prediction [N, D].");

BRAID_REGISTER_CPU_OPERATOR(Accuracy, AccuracyOp);
BRAID_NO_GRADIENT(Accuracy);

}  // namespace braid
