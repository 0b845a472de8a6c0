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

AdagradOp::Outputs AdagradOp::ShapedOutputs(const std::vector<int64_t>& shape) {
  const auto output = [&](int i) {
    return OutputSize() > i ? Output(i, DType::kFloat32, shape)->mutable_data<float>() : nullptr;
  };
  return {output(0), output(1), output(2), output(3)};
}

void AdagradOp::Run() {
  const std::vector<int64_t> shape = CheckInputs();
  const int64_t n = Input(kParam).numel();
  const float lr = Input(kLr).data<float>()[0];
  const Outputs out = ShapedOutputs(shape);
  // Read after the outputs: they are normally the inputs.
  const float* param = Input(kParam).data<float>();
  const float* moment = Input(kMoment).data<float>();
  const float* grad = Input(kGrad).data<float>();
  const AdagradArgs a = args_;
  ParallelFor(n, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const AdagradElement e = AdagradUpdate(a, lr, param[i], grad[i], moment[i]);
      out.param[i] = e.param;
      out.moment[i] = e.moment;
      if (out.effective_lr != nullptr) out.effective_lr[i] = e.effective_lr;
      if (out.update != nullptr) out.update[i] = e.step;
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
