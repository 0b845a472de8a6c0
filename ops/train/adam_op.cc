#include "ops/train/adam_op.h"

#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

constexpr int kParam = 0, kMoment1 = 1, kMoment2 = 2, kGrad = 3, kLr = 4, kIter = 5;

AdamArgs ParseAdamArgs(const ArgumentReader& args) {
  AdamArgs a;
  a.beta1 = args.Get<float>("beta1", a.beta1);
  a.beta2 = args.Get<float>("beta2", a.beta2);
  a.epsilon = args.Get<float>("epsilon", a.epsilon);
  a.weight_decay = args.Get<float>("weight_decay", 0.f);
  a.decoupled = args.Get<bool>("decoupled", false);
  if (!(a.beta1 >= 0 && a.beta1 < 1 && a.beta2 >= 0 && a.beta2 < 1)) {
    ThrowInvalidArgument("beta1 and beta2 must be in [0, 1), got " + std::to_string(a.beta1) +
                         " and " + std::to_string(a.beta2));
  }
  if (!(a.epsilon > 0)) ThrowInvalidArgument("epsilon must be > 0");
  if (!(a.weight_decay >= 0)) ThrowInvalidArgument("weight_decay must be >= 0");
  return a;
}

}  // namespace

std::vector<ShapeInfo> InferAdamShape(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  if (in.size() != 6) return {};  // reported by OpSchema::Verify
  for (int i : {kParam, kMoment1, kMoment2, kGrad, kLr}) {
    if (in[i].dtype != DType::kFloat32) {
      ThrowInvalidArgument("input " + DescribeBlob(def.input(i), in[i]) + " must be float32");
    }
  }
  for (int i : {kMoment1, kMoment2, kGrad}) CheckSameTypeAndShape(def, in, i);
  if (in[kLr].numel() != 1) {
    ThrowInvalidArgument("lr " + DescribeBlob(def.input(kLr), in[kLr]) + " must have one element");
  }
  if (in[kIter].dtype != DType::kInt64 || in[kIter].numel() != 1) {
    ThrowInvalidArgument("iter " + DescribeBlob(def.input(kIter), in[kIter]) +
                         " must be an int64 with one element");
  }
  std::vector<ShapeInfo> out(def.output_size(), in[kParam]);
  return out;
}

AdamOp::AdamOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws), args_(ParseAdamArgs(args())) {}

const std::vector<int64_t>& AdamOp::CheckInputs() {
  for (int i : {kParam, kMoment1, kMoment2, kGrad, kLr})
    CheckInputType(*this, i, {DType::kFloat32});
  CheckInputType(*this, kIter, {DType::kInt64});
  InferAdamShape(def(), InputShapeInfos(*this));
  return Input(kParam).shape();
}

AdamOp::Outputs AdamOp::ShapedOutputs(const std::vector<int64_t>& shape) {
  const auto output = [&](int i) {
    return OutputSize() > i ? Output(i, DType::kFloat32, shape)->mutable_data<float>() : nullptr;
  };
  return {output(0), output(1), output(2), output(3)};
}

void AdamOp::Run() {
  const std::vector<int64_t> shape = CheckInputs();
  const int64_t n = Input(kParam).numel();
  const float lr = Input(kLr).data<float>()[0];
  const float correction = AdamCorrection(args_, Input(kIter).data<int64_t>()[0]);
  const Outputs out = ShapedOutputs(shape);
  // Read after the outputs: they are normally the inputs.
  const float* param = Input(kParam).data<float>();
  const float* m1 = Input(kMoment1).data<float>();
  const float* m2 = Input(kMoment2).data<float>();
  const float* grad = Input(kGrad).data<float>();
  const AdamArgs a = args_;
  ParallelFor(n, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const AdamElement e = AdamUpdate(a, lr, correction, param[i], grad[i], m1[i], m2[i]);
      out.param[i] = e.param;
      out.m1[i] = e.moment1;
      out.m2[i] = e.moment2;
      if (out.step != nullptr) out.step[i] = e.direction;
    }
  });
}

BRAID_OPERATOR_SCHEMA(Adam)
    .Arg("beta1", ArgKind::kFloat)
    .Arg("beta2", ArgKind::kFloat)
    .Arg("epsilon", ArgKind::kFloat)
    .Arg("weight_decay", ArgKind::kFloat)
    .Arg("decoupled", ArgKind::kInt)
    .NumInputs(6)
    .NumOutputs(3, 4)
    .AllowInplace({{kParam, 0}, {kMoment1, 1}, {kMoment2, 2}, {kGrad, 3}})
    .TensorInference(InferAdamShape)
    .SetDoc(
        "Adam step: m1' = beta1 m1 + (1 - beta1) g, m2' = beta2 m2 + (1 - beta2) g^2, direction "
        "= sqrt(1 - beta2^t) / (1 - beta1^t) m1' / (sqrt(m2') + epsilon) (output 3), param += "
        "lr direction, t = iter + 1. lr < 0 descends. weight_decay adds to g (decoupled: decays "
        "param, AdamW).");

BRAID_REGISTER_CPU_OPERATOR(Adam, AdamOp);
BRAID_NO_GRADIENT(Adam);

}  // namespace braid
