#include "ops/train/learning_rate_op.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "ops/common/op_checks.h"
#include "runtime/argument.h"
#include "runtime/gradient.h"
#include "runtime/op_registry.h"

namespace braid {
namespace {

using Multiplier = std::function<double(int64_t)>;

void Require(bool ok, const std::string& policy, const std::string& what) {
  if (!ok) ThrowInvalidArgument("learning rate policy '" + policy + "': " + what);
}

Multiplier StepPolicy(const ArgumentReader& args) {
  const int64_t stepsize = args.Get<int64_t>("stepsize", 0);
  const double gamma = args.Get<float>("gamma", 0.f);
  Require(stepsize > 0 && gamma > 0, "step", "needs stepsize > 0 and gamma > 0");
  return [=](int64_t iter) { return std::pow(gamma, static_cast<double>(iter / stepsize)); };
}

Multiplier LinearWarmup(double start, int64_t num_iter) {
  return [=](int64_t iter) {
    if (iter >= num_iter) return 1.0;
    return start + (1 - start) * static_cast<double>(iter) / static_cast<double>(num_iter);
  };
}

// Where iteration t falls in SGDR's cycles (lengths period, period * t_mult, ...): the cycle's
// index, its length and t's offset into it.
struct CosineCycle {
  double index = 0, length = 1, offset = 0;
};

CosineCycle FindCycle(double t, double period, double t_mult) {
  if (t_mult == 1.0) {
    const double index = std::floor(t / period);
    return {index, period, t - index * period};
  }
  const double index = std::floor(std::log(1 - t / period * (1 - t_mult)) / std::log(t_mult));
  return {index, std::pow(t_mult, index) * period,
          t - (1 - std::pow(t_mult, index)) / (1 - t_mult) * period};
}

// Cosine annealing; argument names start with `prefix` ("" or "cosine_"). With a period, SGDR's
// cycles; with only max_iter, one decay that then stays at min_lr.
Multiplier CosinePolicy(const ArgumentReader& args, const std::string& prefix) {
  const double max_lr = args.Get<float>(prefix + "max_lr", 1.f);
  const double min_lr = args.Get<float>(prefix + "min_lr", 0.f);
  const bool single_decay = prefix.empty() && !args.Has("period") && args.Has("max_iter");
  const double period =
      static_cast<double>(args.Get<int64_t>(single_decay ? "max_iter" : prefix + "period", 0));
  const double t_mult = args.Get<float>(prefix + "t_mult", 1.f);
  const double lr_shrink = args.Get<float>(prefix + "lr_shrink", 1.f);
  Require(period > 0 && t_mult > 0 && max_lr >= min_lr, prefix + "cosine",
          "needs " + prefix + "period (or max_iter) > 0, t_mult > 0 and max_lr >= min_lr");
  return [=](int64_t iter) {
    const double t = static_cast<double>(iter);
    const CosineCycle c =
        single_decay ? CosineCycle{0, period, std::min(t, period)} : FindCycle(t, period, t_mult);
    const double cosine = 0.5 * (1 + std::cos(std::numbers::pi * c.offset / c.length));
    return std::pow(lr_shrink, c.index) * (min_lr + (max_lr - min_lr) * cosine);
  };
}

Multiplier CompositeCosinePolicy(const ArgumentReader& args) {
  const double start = args.Get<float>("start_warmup_multiplier", 0.1f);
  const int64_t constant_iters = args.Get<int64_t>("constant_warmup_num_iter", 0);
  const int64_t linear_iters = args.Get<int64_t>("linear_warmup_num_iter", 0);
  Require(constant_iters >= 0 && linear_iters >= 0, "compositeCosine",
          "needs warmup iteration counts >= 0");
  const Multiplier ramp = LinearWarmup(start, linear_iters);
  const Multiplier cosine = CosinePolicy(args, "cosine_");
  return [=](int64_t iter) {
    if (iter < constant_iters) return start;
    if (iter < constant_iters + linear_iters) return ramp(iter - constant_iters);
    return cosine(iter - constant_iters - linear_iters);
  };
}

Multiplier MakePolicy(const ArgumentReader& args) {
  const std::string policy = args.Get<std::string>("policy", "");
  if (policy == "fixed") return [](int64_t) { return 1.0; };
  if (policy == "step") return StepPolicy(args);
  if (policy == "linearWarmup") {
    return LinearWarmup(args.Get<float>("start_multiplier", 0.f), args.Get<int64_t>("num_iter", 0));
  }
  if (policy == "constantWarmup") {
    const double multiplier = args.Get<float>("multiplier", 0.5f);
    const int64_t num_iter = args.Get<int64_t>("num_iter", 0);
    return [=](int64_t iter) { return iter < num_iter ? multiplier : 1.0; };
  }
  if (policy == "cosine") return CosinePolicy(args, "");
  if (policy == "compositeCosine") return CompositeCosinePolicy(args);
  ThrowInvalidArgument("unknown learning rate policy '" + policy +
                       "' (braid has fixed, step, linearWarmup, constantWarmup, cosine, "
                       "compositeCosine)");
}

std::vector<ShapeInfo> InferLearningRateShape(const OperatorDef& def,
                                              const std::vector<ShapeInfo>& in) {
  if (in.size() != 1) return {};  // reported by OpSchema::Verify
  if (in[0].dtype != DType::kInt64 || in[0].numel() != 1) {
    ThrowInvalidArgument("iteration " + DescribeBlob(def.input(0), in[0]) +
                         " must be an int64 with one element");
  }
  return {ShapeInfo{DType::kFloat32, {}, true}};
}

}  // namespace

LearningRateOp::LearningRateOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws),
      base_lr_(args().Get<float>("base_lr", 0.f) * args().Get<float>("lr_scale", 1.f)),
      multiplier_(MakePolicy(args())) {
  if (!args().Has("base_lr")) ThrowInvalidArgument("LearningRate needs the `base_lr` argument");
}

void LearningRateOp::Run() {
  CheckInputType(*this, 0, {DType::kInt64});
  InferLearningRateShape(def(), InputShapeInfos(*this));
  const int64_t iter = Input(0).data<int64_t>()[0];
  *Output(0, DType::kFloat32, {})->mutable_data<float>() =
      static_cast<float>(base_lr_ * multiplier_(iter));
}

BRAID_OPERATOR_SCHEMA(LearningRate)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(InferLearningRateShape)
    .SetDoc(
        "lr = base_lr * lr_scale * multiplier(iter) for `policy` fixed, step, linearWarmup, "
        "constantWarmup, cosine or compositeCosine.");

BRAID_REGISTER_CPU_OPERATOR(LearningRate, LearningRateOp);
BRAID_NO_GRADIENT(LearningRate);

}  // namespace braid
