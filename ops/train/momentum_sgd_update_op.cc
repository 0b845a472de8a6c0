#include "ops/train/momentum_sgd_update_op.h"

#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

constexpr int kGrad = 0, kMoment = 1, kLr = 2, kParam = 3;

}  // namespace

std::vector<ShapeInfo> InferMomentumSGDUpdateShape(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  if (in.size() != 4) return {};  // reported by OpSchema::Verify
  for (int i : {kGrad, kMoment, kLr, kParam}) {
    if (in[i].dtype != DType::kFloat32) {
      ThrowInvalidArgument("input " + DescribeBlob(def.input(i), in[i]) + " must be float32");
    }
  }
  CheckSameTypeAndShape(def, in, kMoment);
  CheckSameTypeAndShape(def, in, kParam);
  if (in[kLr].numel() != 1) {
    ThrowInvalidArgument("lr " + DescribeBlob(def.input(kLr), in[kLr]) + " must have one element");
  }
  return {in[kGrad], in[kMoment], in[kParam]};
}

MomentumSGDUpdateOp::MomentumSGDUpdateOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws),
      momentum_(args().Get<float>("momentum", 0.f)),
      nesterov_(args().Get<bool>("nesterov", false)),
      weight_decay_(args().Get<float>("weight_decay", 0.f)) {}

void MomentumSGDUpdateOp::Run() {
  for (int i = 0; i < InputSize(); ++i) CheckInputType(*this, i, {DType::kFloat32});
  InferMomentumSGDUpdateShape(def(), InputShapeInfos(*this));
  const std::vector<int64_t>& shape = Input(kGrad).shape();
  const int64_t n = Input(kGrad).numel();
  const float lr = Input(kLr).data<float>()[0];
  float* new_grad = Output(0, DType::kFloat32, shape)->mutable_data<float>();
  float* new_moment = Output(1, DType::kFloat32, shape)->mutable_data<float>();
  float* new_param = Output(2, DType::kFloat32, shape)->mutable_data<float>();
  // Read after mutable_data: the outputs are normally the inputs.
  const float* grad = Input(kGrad).data<float>();
  const float* moment = Input(kMoment).data<float>();
  const float* param = Input(kParam).data<float>();
  const float momentum = momentum_, weight_decay = weight_decay_;
  const bool nesterov = nesterov_;
  ParallelFor(n, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float p = param[i];
      const float g = grad[i] + weight_decay * p;
      const float m = moment[i];
      const float m_new = lr * g + momentum * m;
      const float step = nesterov ? (1 + momentum) * m_new - momentum * m : m_new;
      new_moment[i] = m_new;
      new_grad[i] = step;
      new_param[i] = p - step;
    }
  });
}

BRAID_OPERATOR_SCHEMA(MomentumSGDUpdate)
    .Arg("momentum", ArgKind::kFloat)
    .Arg("nesterov", ArgKind::kInt)
    .Arg("weight_decay", ArgKind::kFloat)
    .NumInputs(4)
    .NumOutputs(3)
    .AllowInplace({{kGrad, 0}, {kMoment, 1}, {kParam, 2}})
    .TensorInference(InferMomentumSGDUpdateShape)
    .SetDoc(
        "Momentum SGD step: m' = lr * (grad + weight_decay * param) + momentum * m; "
        "param -= m' (nesterov: (1 + momentum) m' - momentum m). lr > 0 descends.");

BRAID_REGISTER_CPU_OPERATOR(MomentumSGDUpdate, MomentumSGDUpdateOp);
BRAID_NO_GRADIENT(MomentumSGDUpdate);

}  // namespace braid
