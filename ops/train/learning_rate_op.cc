#include "ops/train/learning_rate_op.h"

#include <cmath>
#include <string>
#include <vector>

#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

using Policy = LearningRateSchedule::Policy;

void Require(bool ok, const std::string& policy, const std::string& what) {
  if (!ok) ThrowInvalidArgument("learning rate policy '" + policy + "': " + what);
}

void ParseMultiStep(const ArgumentReader& args, LearningRateSchedule* s) {
  const std::vector<int64_t> stepsizes = args.GetList<int64_t>("stepsizes");
  s->gamma = args.Get<float>("gamma", 0.f);
  Require(!stepsizes.empty() && s->gamma > 0, "multistep", "needs stepsizes and gamma > 0");
  Require(stepsizes.size() <= kMaxStepsizes, "multistep",
          "takes at most " + std::to_string(kMaxStepsizes) + " stepsizes, got " +
              std::to_string(stepsizes.size()));
  for (size_t i = 0; i < stepsizes.size(); ++i) {
    Require(stepsizes[i] >= 0 && (i == 0 || stepsizes[i] > stepsizes[i - 1]), "multistep",
            "needs ascending stepsizes >= 0");
    s->stepsizes[i] = stepsizes[i];
  }
  s->num_stepsizes = static_cast<int32_t>(stepsizes.size());
}

// exp, inv and poly: Caffe2's arguments, and its defaults none (a missing one is an error).
void ParsePower(const ArgumentReader& args, const std::string& policy, LearningRateSchedule* s) {
  if (policy == "exp" || policy == "inv") {
    s->gamma = args.Get<float>("gamma", 0.f);
    Require(s->gamma > 0, policy, "needs gamma > 0");
  }
  if (policy == "inv" || policy == "poly") {
    Require(args.Has("power"), policy, "needs power");
    s->power = args.Get<float>("power", 1.f);
  }
  if (policy == "inv") Require(s->power > 0, policy, "needs power > 0");
  if (policy == "poly") {
    s->max_iter = args.Get<int64_t>("max_iter", 0);
    Require(s->max_iter > 0 && s->power >= 0, policy, "needs max_iter > 0 and power >= 0");
  }
}

void ParseStep(const ArgumentReader& args, LearningRateSchedule* s) {
  s->stepsize = args.Get<int64_t>("stepsize", 0);
  s->gamma = args.Get<float>("gamma", 0.f);
  Require(s->stepsize > 0 && s->gamma > 0, "step", "needs stepsize > 0 and gamma > 0");
}

// Cosine annealing; argument names start with `prefix` ("" or "cosine_"). With a period, SGDR's
// cycles; with only max_iter, one decay that then stays at min_lr.
CosineSchedule ParseCosine(const ArgumentReader& args, const std::string& prefix) {
  CosineSchedule c;
  c.max_lr = args.Get<float>(prefix + "max_lr", 1.f);
  c.min_lr = args.Get<float>(prefix + "min_lr", 0.f);
  c.single_decay = prefix.empty() && !args.Has("period") && args.Has("max_iter");
  c.period = args.Get<int64_t>(c.single_decay ? "max_iter" : prefix + "period", 0);
  c.t_mult = args.Get<float>(prefix + "t_mult", 1.f);
  c.lr_shrink = args.Get<float>(prefix + "lr_shrink", 1.f);
  // t_mult < 1 shrinks the cycles to nothing at period / (1 - t_mult) iterations (Caffe2 accepts
  // it; Run refuses an iteration past that end).
  Require(c.period > 0 && c.t_mult > 0 && c.max_lr >= c.min_lr, prefix + "cosine",
          "needs " + prefix + "period (or max_iter) > 0, " + prefix +
              "t_mult > 0 and max_lr >= min_lr");
  return c;
}

void ParseCompositeCosine(const ArgumentReader& args, LearningRateSchedule* s) {
  s->start = args.Get<float>("start_warmup_multiplier", 0.1f);
  s->constant_iters = args.Get<int64_t>("constant_warmup_num_iter", 0);
  s->num_iter = args.Get<int64_t>("linear_warmup_num_iter", 0);
  Require(s->constant_iters >= 0 && s->num_iter >= 0, "compositeCosine",
          "needs warmup iteration counts >= 0");
  s->cosine = ParseCosine(args, "cosine_");
}

void ParsePolicy(const ArgumentReader& args, LearningRateSchedule* s) {
  const std::string policy = args.Get<std::string>("policy", "");
  if (policy == "fixed") {
    s->policy = Policy::kFixed;
  } else if (policy == "step") {
    s->policy = Policy::kStep;
    ParseStep(args, s);
  } else if (policy == "multistep") {
    s->policy = Policy::kMultiStep;
    ParseMultiStep(args, s);
  } else if (policy == "exp" || policy == "inv" || policy == "poly") {
    s->policy = policy == "exp" ? Policy::kExp : policy == "inv" ? Policy::kInv : Policy::kPoly;
    ParsePower(args, policy, s);
  } else if (policy == "linearWarmup") {
    s->policy = Policy::kLinearWarmup;
    s->start = args.Get<float>("start_multiplier", 0.f);
    s->num_iter = args.Get<int64_t>("num_iter", 0);
  } else if (policy == "constantWarmup") {
    s->policy = Policy::kConstantWarmup;
    s->start = args.Get<float>("multiplier", 0.5f);
    s->num_iter = args.Get<int64_t>("num_iter", 0);
  } else if (policy == "cosine") {
    s->policy = Policy::kCosine;
    s->cosine = ParseCosine(args, "");
  } else if (policy == "compositeCosine") {
    s->policy = Policy::kCompositeCosine;
    ParseCompositeCosine(args, s);
  } else {
    ThrowInvalidArgument("unknown learning rate policy '" + policy +
                         "' (braid has fixed, step, multistep, exp, inv, poly, linearWarmup, "
                         "constantWarmup, cosine, compositeCosine)");
  }
}

}  // namespace

LearningRateSchedule ParseLearningRateSchedule(const ArgumentReader& args) {
  LearningRateSchedule s;
  s.base_lr = args.Get<float>("base_lr", 0.f) * args.Get<float>("lr_scale", 1.f);
  ParsePolicy(args, &s);
  if (!args.Has("base_lr")) ThrowInvalidArgument("LearningRate needs the `base_lr` argument");
  return s;
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

LearningRateOp::LearningRateOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws), schedule_(ParseLearningRateSchedule(args())) {}

void LearningRateOp::Run() {
  CheckInputType(*this, 0, {DType::kInt64});
  InferLearningRateShape(def(), InputShapeInfos(*this));
  const int64_t iter = Input(0).data<int64_t>()[0];
  const float lr = LearningRateAt(schedule_, iter);
  if (std::isnan(lr)) {
    const CosineSchedule& c = schedule_.cosine;
    ThrowInvalidArgument("iteration " + std::to_string(iter) +
                         " is past the end of the cosine schedule: with t_mult " +
                         std::to_string(c.t_mult) + " < 1 its cycles end at period / (1 - t_mult) = " +
                         std::to_string(static_cast<double>(c.period) / (1 - c.t_mult)) +
                         " iterations (counted from the warmup's end)");
  }
  *Output(0, DType::kFloat32, {})->mutable_data<float>() = lr;
}

BRAID_OPERATOR_SCHEMA(LearningRate)
    .Arg("base_lr", ArgKind::kFloat)
    .Arg("lr_scale", ArgKind::kFloat)
    .Arg("policy", ArgKind::kString)
    .Arg("stepsize", ArgKind::kInt)
    .Arg("gamma", ArgKind::kFloat)
    .Arg("stepsizes", ArgKind::kInts)
    .Arg("power", ArgKind::kFloat)
    .Arg("max_lr", ArgKind::kFloat)
    .Arg("min_lr", ArgKind::kFloat)
    .Arg("period", ArgKind::kInt)
    .Arg("t_mult", ArgKind::kFloat)
    .Arg("lr_shrink", ArgKind::kFloat)
    .Arg("max_iter", ArgKind::kInt)
    .Arg("cosine_max_lr", ArgKind::kFloat)
    .Arg("cosine_min_lr", ArgKind::kFloat)
    .Arg("cosine_period", ArgKind::kInt)
    .Arg("cosine_t_mult", ArgKind::kFloat)
    .Arg("cosine_lr_shrink", ArgKind::kFloat)
    .Arg("start_warmup_multiplier", ArgKind::kFloat)
    .Arg("constant_warmup_num_iter", ArgKind::kInt)
    .Arg("linear_warmup_num_iter", ArgKind::kInt)
    .Arg("start_multiplier", ArgKind::kFloat)
    .Arg("num_iter", ArgKind::kInt)
    .Arg("multiplier", ArgKind::kFloat)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(InferLearningRateShape)
    .SetDoc(
        "lr = base_lr * lr_scale * multiplier(iter) for `policy` fixed, step, multistep, exp, "
        "inv, poly, linearWarmup, constantWarmup, cosine or compositeCosine.");

BRAID_REGISTER_CPU_OPERATOR(LearningRate, LearningRateOp);
BRAID_NO_GRADIENT(LearningRate);

}  // namespace braid
