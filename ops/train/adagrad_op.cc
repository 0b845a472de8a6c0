#include "ops/train/adagrad_op.h"

#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

constexpr int kParam = 0, kMoment = 1, kGrad = 2, kLr = 3;

AdagradArgs ParseAdagradArgs(const ArgumentReader& args) {
  AdagradArgs a;
  a.epsilon = args.Get<float>("epsilon", a.epsilon);
  a.decay = args.Get<float>("decay", a.decay);
  a.weight_decay = args.Get<float>("weight_decay", 0.f);
  if (!(a.epsilon > 0)) ThrowInvalidArgument("epsilon must be > 0");
  if (!(a.decay >= 0 && a.decay <= 1)) {
    ThrowInvalidArgument("decay must be in [0, 1], got " + std::to_string(a.decay));
  }
  if (!(a.weight_decay >= 0)) ThrowInvalidArgument("weight_decay must be >= 0");
  return a;
}

}  // namespace

std::vector<ShapeInfo> InferAdagradShape(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  if (in.size() != 4) return {};  // reported by OpSchema::Verify
  for (int i : {kParam, kMoment, kGrad, kLr}) {
    if (in[i].dtype != DType::kFloat32) {
      ThrowInvalidArgument("input " + DescribeBlob(def.input(i), in[i]) + " must be float32");
    }
  }
  for (int i : {kMoment, kGrad}) CheckSameTypeAndShape(def, in, i);
  if (in[kLr].numel() != 1) {
    ThrowInvalidArgument("lr " + DescribeBlob(def.input(kLr), in[kLr]) + " must have one element");
  }
  return std::vector<ShapeInfo>(def.output_size(), in[kParam]);
}

AdagradOp::AdagradOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws), args_(ParseAdagradArgs(args())) {}

const std::vector<int64_t>& AdagradOp::CheckInputs() {
  for (int i = 0; i < InputSize(); ++i) CheckInputType(*this, i, {DType::kFloat32});
  InferAdagradShape(def(), InputShapeInfos(*this));
  return Input(kParam).shape();
}

void AdagradOp::Run() {
  const std::vector<int64_t> shape = CheckInputs();
  const int64_t n = Input(kParam).numel();
  const float lr = Input(kLr).data<float>()[0];
  float* new_param = Output(0, DType::kFloat32, shape)->mutable_data<float>();
  float* new_moment = Output(1, DType::kFloat32, shape)->mutable_data<float>();
  float* effective_lr =
      OutputSize() > 2 ? Output(2, DType::kFloat32, shape)->mutable_data<float>() : nullptr;
  float* update =
      OutputSize() > 3 ? Output(3, DType::kFloat32, shape)->mutable_data<float>() : nullptr;
  // Read after mutable_data: the outputs are normally the inputs.
  const float* param = Input(kParam).data<float>();
  const float* moment = Input(kMoment).data<float>();
  const float* grad = Input(kGrad).data<float>();
  const AdagradArgs a = args_;
  ParallelFor(n, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const AdagradElement e = AdagradUpdate(a, lr, param[i], grad[i], moment[i]);
      new_param[i] = e.param;
      new_moment[i] = e.moment;
      if (effective_lr != nullptr) effective_lr[i] = e.effective_lr;
      if (update != nullptr) update[i] = e.step;
    }
  });
}

BRAID_OPERATOR_SCHEMA(Adagrad)
    .Arg("epsilon", ArgKind::kFloat)
    .Arg("decay", ArgKind::kFloat)
    .Arg("weight_decay", ArgKind::kFloat)
    .NumInputs(4)
    .NumOutputs(2, 4)
    .AllowInplace({{kParam, 0}, {kMoment, 1}, {kGrad, 3}})
    .TensorInference(InferAdagradShape)
    .SetDoc(
        "Adagrad step: g = grad + weight_decay param, h' = decay h + g^2, param += lr g / "
        "(sqrt(h') + epsilon). lr < 0 descends.");

BRAID_REGISTER_CPU_OPERATOR(Adagrad, AdagradOp);
BRAID_NO_GRADIENT(Adagrad);

}  // namespace braid
