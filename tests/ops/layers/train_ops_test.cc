// WeightedSum, MomentumSGDUpdate, Iter and LearningRate: values against hand computations,
// in-place updates, learning rate schedules at given iterations, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "ops/layers/layer_test_util.h"
#include "ops/train/learning_rate_schedule.h"

namespace braid::test {
namespace {

TEST(WeightedSumTest, SumsWeightedInputsAndUpdatesInPlace) {
  Workspace ws;
  Feed<float>(&ws, "param", {3}, {1, 2, 3});
  Feed<float>(&ws, "grad", {3}, {10, 20, 30});
  Feed<float>(&ws, "one", {1}, {1});
  Feed<float>(&ws, "lr", {}, {-0.1f});
  ASSERT_TRUE(RunOp(&ws, R"(type: "WeightedSum" input: "param" input: "one" input: "grad"
                            input: "lr" output: "out")"));
  ExpectNear(Fetch<float>(ws, "out"), {0, 0, 0}, 1e-6f);
  ASSERT_TRUE(RunOp(&ws, R"(type: "WeightedSum" input: "param" input: "lr" input: "grad"
                            input: "one" output: "param")"));
  ExpectNear(Fetch<float>(ws, "param"), {9.9f, 19.8f, 29.7f}, 1e-5f);
}

TEST(WeightedSumTest, ErrorsNameTheWeightAndTheMismatchedInput) {
  Workspace ws;
  Feed<float>(&ws, "a", {2}, {1, 2});
  Feed<float>(&ws, "b", {3}, {1, 2, 3});
  Feed<float>(&ws, "w2", {2}, {1, 1});
  Feed<float>(&ws, "w", {1}, {1});
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "WeightedSum" input: "a" input: "w2"
                                          output: "y")"),
                       "weight 'w2' float32[2] must be a float32 with one element"));
  const std::string op = R"(type: "WeightedSum" input: "a" input: "w" input: "b" input: "w"
                            output: "y")";
  EXPECT_TRUE(Contains(RunOpError(&ws, op), "input 'b' float32[3] must have the type and shape"));
  EXPECT_TRUE(Contains(InferError(ws, op), "input 'b' float32[3]"));
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "WeightedSum" input: "a" input: "w" input: "b"
                                          output: "y")"),
                       "WeightedSum inputs come in pairs"));
}

TEST(WeightedSumGradientTest, ScalesDYAndOptionallyDotsItWithEachInput) {
  Workspace ws;
  Feed<float>(&ws, "dY", {2}, {1, -2});
  Feed<float>(&ws, "X0", {2}, {3, 4});
  Feed<float>(&ws, "w0", {1}, {0.5});
  Feed<float>(&ws, "X1", {2}, {-1, 1});
  Feed<float>(&ws, "w1", {1}, {2});
  ASSERT_TRUE(RunOp(&ws, R"(type: "WeightedSumGradient" input: "dY" input: "X0" input: "w0"
                            input: "X1" input: "w1" output: "dX0" output: "dX1" output: "dw0"
                            output: "dw1")"));
  EXPECT_EQ(Fetch<float>(ws, "dX0"), (std::vector<float>{0.5, -1}));
  EXPECT_EQ(Fetch<float>(ws, "dX1"), (std::vector<float>{2, -4}));
  EXPECT_EQ(Fetch<float>(ws, "dw0"), std::vector<float>{-5});
  EXPECT_EQ(Fetch<float>(ws, "dw1"), std::vector<float>{-3});
}

const char kMomentumSgd[] = R"(type: "MomentumSGDUpdate" input: "grad" input: "moment"
    input: "lr" input: "param" output: "grad" output: "moment" output: "param" )";

TEST(MomentumSGDUpdateTest, MatchesAHandComputedStepInPlace) {
  Workspace ws;
  Feed<float>(&ws, "grad", {2}, {1, -2});
  Feed<float>(&ws, "moment", {2}, {0.5, 0});
  Feed<float>(&ws, "lr", {}, {0.1f});
  Feed<float>(&ws, "param", {2}, {1, 1});
  ASSERT_TRUE(RunOp(&ws, std::string(kMomentumSgd) + R"(arg { name: "momentum" f: 0.9 })"));
  // m' = lr * g + momentum * m = [0.1 + 0.45, -0.2]; param -= m'.
  ExpectNear(Fetch<float>(ws, "moment"), {0.55f, -0.2f}, 1e-6f);
  ExpectNear(Fetch<float>(ws, "grad"), {0.55f, -0.2f}, 1e-6f);
  ExpectNear(Fetch<float>(ws, "param"), {0.45f, 1.2f}, 1e-6f);
}

TEST(MomentumSGDUpdateTest, NesterovAndWeightDecay) {
  Workspace ws;
  Feed<float>(&ws, "grad", {1}, {1});
  Feed<float>(&ws, "moment", {1}, {0.5});
  Feed<float>(&ws, "lr", {1}, {0.1f});
  Feed<float>(&ws, "param", {1}, {2});
  ASSERT_TRUE(RunOp(&ws, std::string(kMomentumSgd) + R"(arg { name: "momentum" f: 0.9 }
      arg { name: "nesterov" i: 1 } arg { name: "weight_decay" f: 0.5 })"));
  // g = 1 + 0.5 * 2 = 2; m' = 0.9 * 0.5 + 0.1 * 2 = 0.65; step = 1.9 * 0.65 - 0.9 * 0.5 = 0.785.
  ExpectNear(Fetch<float>(ws, "moment"), {0.65f}, 1e-6f);
  ExpectNear(Fetch<float>(ws, "grad"), {0.785f}, 1e-6f);
  ExpectNear(Fetch<float>(ws, "param"), {2 - 0.785f}, 1e-6f);
}

TEST(MomentumSGDUpdateTest, ShapeMismatchNamesTheBlobs) {
  Workspace ws;
  Feed<float>(&ws, "grad", {2}, {1, 1});
  Feed<float>(&ws, "moment", {3}, {0, 0, 0});
  Feed<float>(&ws, "lr", {1}, {0.1f});
  Feed<float>(&ws, "param", {2}, {1, 1});
  const std::string error = RunOpError(&ws, kMomentumSgd);
  EXPECT_TRUE(Contains(error,
                       "input 'moment' float32[3] must have the type and shape of input "
                       "'grad' float32[2]"))
      << error;
}

TEST(IterTest, CountsFromAConstantFillOrFromAnEmptyBlob) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" output: "iter" arg { name: "shape" ints: 1 }
                            arg { name: "value" i: 0 } arg { name: "dtype" i: 10 })"));
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(RunOp(&ws, R"(type: "Iter" input: "iter" output: "iter")"));
  EXPECT_EQ(Fetch<int64_t>(ws, "iter"), std::vector<int64_t>{3});
  ws.CreateBlob("fresh");  // never written: RunOp's inference would see a float32 scalar
  ASSERT_TRUE(ws.RunNetOnce(NetOf({R"(type: "Iter" input: "fresh" output: "fresh")"})).ok());
  EXPECT_EQ(Fetch<int64_t>(ws, "fresh"), std::vector<int64_t>{1});
  EXPECT_EQ(ShapeOf(ws, "fresh"), std::vector<int64_t>{1});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Iter" output: "old_style")"));
  EXPECT_EQ(Fetch<int64_t>(ws, "old_style"), std::vector<int64_t>{1});
}

TEST(IterTest, RejectsAFloatCounterAndAnOutputElsewhere) {
  Workspace ws;
  Feed<float>(&ws, "f", {1}, {0});
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "Iter" input: "f" output: "f")"),
                       "counter 'f' float32[1] must be an int64 with one element"));
  Feed<int64_t>(&ws, "iter", {1}, {0});
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "Iter" input: "iter" output: "other")"),
                       "must be the same blob"));
}

// The learning rate of op `args` (policy and its arguments) at iteration `iter`.
float LearningRateAt(const std::string& args, int64_t iter) {
  Workspace ws;
  Feed<int64_t>(&ws, "iter", {1}, {iter});
  EXPECT_TRUE(RunOp(&ws, R"(type: "LearningRate" input: "iter" output: "lr" )" + args));
  EXPECT_EQ(ShapeOf(ws, "lr"), std::vector<int64_t>{});
  return Fetch<float>(ws, "lr").at(0);
}

TEST(LearningRateTest, FixedAndStepSchedules) {
  const std::string fixed = R"(arg { name: "base_lr" f: -0.1 } arg { name: "policy" s: "fixed" })";
  EXPECT_FLOAT_EQ(LearningRateAt(fixed, 0), -0.1f);
  EXPECT_FLOAT_EQ(LearningRateAt(fixed, 12345), -0.1f);
  const std::string step = R"(arg { name: "base_lr" f: 0.1 } arg { name: "policy" s: "step" }
      arg { name: "stepsize" i: 10 } arg { name: "gamma" f: 0.5 })";
  EXPECT_FLOAT_EQ(LearningRateAt(step, 0), 0.1f);
  EXPECT_FLOAT_EQ(LearningRateAt(step, 9), 0.1f);
  EXPECT_FLOAT_EQ(LearningRateAt(step, 10), 0.05f);
  EXPECT_FLOAT_EQ(LearningRateAt(step, 35), 0.0125f);
  EXPECT_FLOAT_EQ(LearningRateAt(step + R"(arg { name: "lr_scale" f: 2 })", 35), 0.025f);
}

TEST(LearningRateTest, CosineFollowsSgdrWithRestartsAndShrink) {
  const std::string cosine = R"(arg { name: "base_lr" f: 2 } arg { name: "policy" s: "cosine" }
      arg { name: "max_lr" f: 1 } arg { name: "min_lr" f: 0 } arg { name: "period" i: 100 }
      arg { name: "lr_shrink" f: 0.5 })";
  EXPECT_FLOAT_EQ(LearningRateAt(cosine, 0), 2.f);
  EXPECT_NEAR(LearningRateAt(cosine, 50), 1.f, 1e-6);
  EXPECT_NEAR(LearningRateAt(cosine, 25), 1 + std::cos(std::numbers::pi / 4), 1e-6);
  EXPECT_NEAR(LearningRateAt(cosine, 100), 1.f, 1e-6);  // restart, shrunk by 0.5
  EXPECT_NEAR(LearningRateAt(cosine, 150), 0.5f, 1e-6);
  // t_mult 2 makes the second cycle [100, 300).
  const std::string doubling = R"(arg { name: "base_lr" f: 1 } arg { name: "policy" s: "cosine" }
      arg { name: "period" i: 100 } arg { name: "t_mult" f: 2 })";
  EXPECT_NEAR(LearningRateAt(doubling, 50), 0.5f, 1e-6);
  EXPECT_NEAR(LearningRateAt(doubling, 200), 0.5f, 1e-6);
  EXPECT_NEAR(LearningRateAt(doubling, 300), 1.f, 1e-6);
}

// Every restart of SGDR with an integer t_mult, found by adding cycle lengths in integers, is
// where FindCosineCycle starts a cycle, and the iteration before it ends the previous one.
void ExpectExactRestarts(int64_t period, int64_t t_mult, int64_t last) {
  int64_t start = 0, length = period;
  for (int64_t k = 0; start <= last; ++k) {
    SCOPED_TRACE("period " + std::to_string(period) + " t_mult " + std::to_string(t_mult) +
                 ": restart " + std::to_string(k) + " at " + std::to_string(start));
    const CosineCycle at = FindCosineCycle(start, period, static_cast<double>(t_mult));
    EXPECT_EQ(at.index, k);
    EXPECT_EQ(at.offset, 0.0);
    EXPECT_EQ(at.length, static_cast<double>(length));
    if (k > 0) {
      const CosineCycle before = FindCosineCycle(start - 1, period, static_cast<double>(t_mult));
      EXPECT_EQ(before.index, k - 1);
      EXPECT_EQ(before.offset + 1, before.length);
    }
    start += length;
    length *= t_mult;
  }
}

TEST(LearningRateTest, CosineCyclesRestartAtExactIntegerBoundaries) {
  ExpectExactRestarts(100, 2, int64_t{1} << 50);  // 100, 300, 700, 1500, ...
  ExpectExactRestarts(100, 3, int64_t{1} << 50);  // 100, 400, 1300, 4000, 12100, ...
  ExpectExactRestarts(1, 3, int64_t{1} << 50);
  ExpectExactRestarts(7, 5, int64_t{1} << 50);
  ExpectExactRestarts(100, 1, 100000);  // 100, 200, 300, ...
  const CosineCycle late = FindCosineCycle(int64_t{1} << 62, 1, 1.0);
  EXPECT_EQ(late.index, int64_t{1} << 62);
  // An iteration counter saturated at INT64_MAX still finds a cycle.
  EXPECT_GE(FindCosineCycle(INT64_MAX, 100, 2.0).index, 55);
}

// t_mult 1.5, period 4: cycles of 4, 6, 9, 13.5, ... start at 0, 4, 10, 19, 32.5.
TEST(LearningRateTest, CosineCyclesWithAFractionalTMult) {
  const std::vector<std::pair<int64_t, int64_t>> iteration_cycle = {
      {3, 0}, {4, 1}, {9, 1}, {10, 2}, {18, 2}, {19, 3}, {32, 3}, {33, 4}};
  for (const auto& [t, k] : iteration_cycle) {
    EXPECT_EQ(FindCosineCycle(t, 4, 1.5).index, k) << "iteration " << t;
  }
  const CosineCycle third = FindCosineCycle(20, 4, 1.5);
  EXPECT_EQ(third.length, 13.5);
  EXPECT_EQ(third.offset, 1.0);
}

// t_mult 0.5, period 100 (Caffe2 accepts it): cycles of 100, 50, 25, ... start at 0, 100, 150, 175,
// ..., approaching 200, where the schedule ends.
TEST(LearningRateTest, ShrinkingCosineCyclesEndAtPeriodOverOneMinusTMult) {
  const std::vector<std::pair<int64_t, int64_t>> iteration_cycle = {
      {0, 0}, {99, 0}, {100, 1}, {149, 1}, {150, 2}, {175, 3}, {199, 7}};
  for (const auto& [t, k] : iteration_cycle) {
    EXPECT_EQ(FindCosineCycle(t, 100, 0.5).index, k) << "iteration " << t;
  }
  EXPECT_EQ(FindCosineCycle(150, 100, 0.5).length, 25.0);
  for (int64_t past : {int64_t{200}, int64_t{201}, int64_t{1} << 40}) {
    EXPECT_EQ(FindCosineCycle(past, 100, 0.5).index, -1) << "iteration " << past;
  }
  const std::string shrinking = R"(arg { name: "base_lr" f: 1 } arg { name: "policy" s: "cosine" }
      arg { name: "period" i: 100 } arg { name: "t_mult" f: 0.5 })";
  EXPECT_FLOAT_EQ(LearningRateAt(shrinking, 150), 1.f);  // a restart
  CosineSchedule past_the_end;  // what a GPU's kernel computes there: NaN, as Caffe2
  past_the_end.period = 100;
  past_the_end.t_mult = 0.5;
  EXPECT_TRUE(std::isnan(CosineMultiplier(past_the_end, 200)));
  Workspace ws;
  Feed<int64_t>(&ws, "iter", {1}, {250});
  const std::string error =
      RunOpError(&ws, R"(type: "LearningRate" input: "iter" output: "lr" )" + shrinking);
  EXPECT_NE(error.find("iteration 250 is past the end"), std::string::npos) << error;
  EXPECT_NE(error.find("200"), std::string::npos) << error;
}

// The floating-point cycle index, floor(log(1 + t (t_mult - 1) / period) / log(t_mult)), put
// iteration 12100 (period 100, t_mult 3: the start of cycle 5, found by scanning every restart for
// t_mult 2 to 5 and periods 1 to 1000) in cycle 4, at its very end: the rate was min_lr where SGDR
// restarts at max_lr. t_mult 2 never showed it below 10^15 iterations.
TEST(LearningRateTest, CosineRestartsAtMaxLrWhereALogarithmSaidThePreviousCycle) {
  const std::string tripling = R"(arg { name: "base_lr" f: 1 } arg { name: "policy" s: "cosine" }
      arg { name: "period" i: 100 } arg { name: "t_mult" f: 3 } arg { name: "min_lr" f: 0.1 })";
  EXPECT_FLOAT_EQ(LearningRateAt(tripling, 12100), 1.f);
  EXPECT_NEAR(LearningRateAt(tripling, 12099), 0.1f, 1e-6);
  EXPECT_FLOAT_EQ(LearningRateAt(tripling, 4000), 1.f);
}

TEST(LearningRateTest, CosineWithMaxIterDecaysOnceThenHoldsMinLr) {
  const std::string decay = R"(arg { name: "base_lr" f: 0.1 } arg { name: "policy" s: "cosine" }
      arg { name: "max_iter" i: 100 } )";
  EXPECT_FLOAT_EQ(LearningRateAt(decay, 0), 0.1f);
  EXPECT_NEAR(LearningRateAt(decay, 50), 0.05f, 1e-7);
  EXPECT_NEAR(LearningRateAt(decay, 100), 0.f, 1e-7);
  EXPECT_NEAR(LearningRateAt(decay, 150), 0.f, 1e-7);
  const std::string floor = decay + R"(arg { name: "min_lr" f: 0.1 })";
  EXPECT_NEAR(LearningRateAt(floor, 100), 0.01f, 1e-7);
  EXPECT_NEAR(LearningRateAt(floor, 1000), 0.01f, 1e-7);
}

TEST(LearningRateTest, WarmupPolicies) {
  const std::string linear = R"(arg { name: "base_lr" f: 1 } arg { name: "policy"
      s: "linearWarmup" } arg { name: "start_multiplier" f: 0.2 } arg { name: "num_iter" i: 4 })";
  EXPECT_FLOAT_EQ(LearningRateAt(linear, 0), 0.2f);
  EXPECT_FLOAT_EQ(LearningRateAt(linear, 2), 0.6f);
  EXPECT_FLOAT_EQ(LearningRateAt(linear, 4), 1.f);
  const std::string constant = R"(arg { name: "base_lr" f: 1 } arg { name: "policy"
      s: "constantWarmup" } arg { name: "multiplier" f: 0.1 } arg { name: "num_iter" i: 3 })";
  EXPECT_FLOAT_EQ(LearningRateAt(constant, 2), 0.1f);
  EXPECT_FLOAT_EQ(LearningRateAt(constant, 3), 1.f);
  const std::string composite = R"(arg { name: "base_lr" f: 1 } arg { name: "policy"
      s: "compositeCosine" } arg { name: "start_warmup_multiplier" f: 0.5 }
      arg { name: "constant_warmup_num_iter" i: 2 } arg { name: "linear_warmup_num_iter" i: 4 }
      arg { name: "cosine_max_lr" f: 1 } arg { name: "cosine_min_lr" f: 0 }
      arg { name: "cosine_period" i: 10 })";
  EXPECT_FLOAT_EQ(LearningRateAt(composite, 1), 0.5f);
  EXPECT_FLOAT_EQ(LearningRateAt(composite, 4), 0.75f);
  EXPECT_FLOAT_EQ(LearningRateAt(composite, 6), 1.f);
  EXPECT_NEAR(LearningRateAt(composite, 11), 0.5f, 1e-6);
}

TEST(LearningRateTest, BadArgumentsAreReportedWhenTheOpIsCreated) {
  Workspace ws;
  Feed<int64_t>(&ws, "iter", {1}, {0});
  auto error = [&](const std::string& args) {
    return RunOpError(&ws, R"(type: "LearningRate" input: "iter" output: "lr" )" + args);
  };
  EXPECT_TRUE(Contains(error(R"(arg { name: "base_lr" f: 1 } arg { name: "policy" s: "poly" })"),
                       "unknown learning rate policy 'poly'"));
  EXPECT_TRUE(Contains(error(R"(arg { name: "policy" s: "fixed" })"), "needs the `base_lr`"));
  EXPECT_TRUE(Contains(error(R"(arg { name: "base_lr" f: 1 } arg { name: "policy" s: "step" })"),
                       "'step': needs stepsize > 0 and gamma > 0"));
  EXPECT_TRUE(Contains(error(R"(arg { name: "base_lr" f: 1 } arg { name: "policy" s: "cosine" })"),
                       "'cosine': needs period (or max_iter) > 0"));
  EXPECT_TRUE(Contains(error(R"(arg { name: "base_lr" f: 1 } arg { name: "policy" s: "cosine" }
                                arg { name: "period" i: 10 } arg { name: "t_mult" f: 0 })"),
                       "t_mult > 0"));
  Feed<int32_t>(&ws, "iter32", {1}, {0});
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "LearningRate" input: "iter32" output: "lr"
      arg { name: "base_lr" f: 1 } arg { name: "policy" s: "fixed" })"),
                       "input 'iter32' int32[1] must be int64"));
}

// Iter, LearningRate and MomentumSGDUpdate as a train net runs them, minimising w^2 for three
// iterations, against the same steps done by hand.
TEST(SgdLoopTest, ThreeMomentumStepsOnAQuadratic) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" output: "iter" arg { name: "shape" ints: 1 }
                            arg { name: "value" i: 0 } arg { name: "dtype" i: 10 })"));
  Feed<float>(&ws, "w", {1}, {1});
  Feed<float>(&ws, "w_moment", {1}, {0});
  const NetDef net = NetOf({
      R"(type: "Iter" input: "iter" output: "iter")",
      R"(type: "LearningRate" input: "iter" output: "lr" arg { name: "base_lr" f: 0.1 }
         arg { name: "policy" s: "step" } arg { name: "stepsize" i: 2 } arg { name: "gamma" f: 0.5 })",
      R"(type: "Add" input: "w" input: "w" output: "w_grad")",  // d(w^2)/dw
      R"(type: "MomentumSGDUpdate" input: "w_grad" input: "w_moment" input: "lr" input: "w"
         output: "w_grad" output: "w_moment" output: "w" arg { name: "momentum" f: 0.5 })",
  });
  double w = 1, m = 0;
  for (int iter = 1; iter <= 3; ++iter) {
    ASSERT_TRUE(ws.RunNetOnce(net).ok());
    const double lr = 0.1 * std::pow(0.5, iter / 2);  // Iter runs first: the rate sees 1, 2, 3
    m = lr * 2 * w + 0.5 * m;
    w -= m;
  }
  EXPECT_EQ(Fetch<int64_t>(ws, "iter"), std::vector<int64_t>{3});
  ExpectNear(Fetch<float>(ws, "w"), {static_cast<float>(w)}, 1e-6f);
  ExpectNear(Fetch<float>(ws, "w_moment"), {static_cast<float>(m)}, 1e-6f);
}

}  // namespace
}  // namespace braid::test
