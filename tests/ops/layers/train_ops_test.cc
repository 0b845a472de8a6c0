// WeightedSum, MomentumSGDUpdate, Adam, Adagrad, Iter and LearningRate: values against hand
// computations, in-place updates, learning rate schedules at given iterations, and errors.
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

const char kAdam[] = R"(type: "Adam" input: "w" input: "m1" input: "m2" input: "g" input: "lr"
    input: "iter" output: "w" output: "m1" output: "m2" )";

// Caffe2's Adam by hand, in double from the op's float arguments: t = iter + 1.
struct AdamByHand {
  double beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-5f, weight_decay = 0;
  bool decoupled = false;
  void Step(double lr, int64_t iter, double g, double* w, double* m1, double* m2) const {
    const double t = static_cast<double>(iter) + 1;
    const double correction = std::sqrt(1 - std::pow(beta2, t)) / (1 - std::pow(beta1, t));
    const double gi = decoupled ? g : g + weight_decay * *w;
    *m1 = beta1 * *m1 + (1 - beta1) * gi;
    *m2 = beta2 * *m2 + (1 - beta2) * gi * gi;
    *w += lr * correction * *m1 / (std::sqrt(*m2) + epsilon) +
          (decoupled ? lr * weight_decay * *w : 0);
  }
};

TEST(AdamTest, ThreeStepsInPlaceMatchAHandComputation) {
  Workspace ws;
  const std::vector<double> grads[3] = {{0.5, -2, 0}, {0.25, 1, 1e-3}, {-1, 3, 0}};
  std::vector<double> w = {1, -1, 0.5}, m1(3, 0), m2(3, 0);
  Feed<float>(&ws, "w", {3}, {1, -1, 0.5});
  Feed<float>(&ws, "m1", {3}, {0, 0, 0});
  Feed<float>(&ws, "m2", {3}, {0, 0, 0});
  Feed<float>(&ws, "lr", {}, {-0.01f});
  const AdamByHand adam;
  for (int64_t iter = 0; iter < 3; ++iter) {
    Feed<int64_t>(&ws, "iter", {1}, {iter});
    const std::vector<double>& g = grads[iter];
    Feed<float>(&ws, "g", {3},
                {static_cast<float>(g[0]), static_cast<float>(g[1]), static_cast<float>(g[2])});
    ASSERT_TRUE(RunOp(&ws, kAdam));
    for (int i = 0; i < 3; ++i) adam.Step(-0.01f, iter, g[i], &w[i], &m1[i], &m2[i]);
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(Fetch<float>(ws, "w")[i], w[i], 1e-6) << "iter " << iter << " element " << i;
      EXPECT_NEAR(Fetch<float>(ws, "m1")[i], m1[i], 1e-6);
      EXPECT_NEAR(Fetch<float>(ws, "m2")[i], m2[i], 1e-6);
    }
  }
}

TEST(AdamTest, WeightDecayCoupledOrDecoupledAndTheFourthOutputIsTheDirection) {
  for (const bool decoupled : {false, true}) {
    SCOPED_TRACE(decoupled ? "decoupled" : "coupled");
    Workspace ws;
    Feed<float>(&ws, "w", {2}, {2, -4});
    Feed<float>(&ws, "m1", {2}, {0.1f, -0.2f});
    Feed<float>(&ws, "m2", {2}, {0.01f, 0.04f});
    Feed<float>(&ws, "g", {2}, {0.3f, 0.5f});
    Feed<float>(&ws, "lr", {1}, {-0.1f});
    Feed<int64_t>(&ws, "iter", {1}, {7});
    ASSERT_TRUE(RunOp(&ws, std::string(R"(type: "Adam" input: "w" input: "m1" input: "m2"
        input: "g" input: "lr" input: "iter" output: "w2" output: "m1" output: "m2"
        output: "step" arg { name: "beta1" f: 0.8 } arg { name: "beta2" f: 0.99 }
        arg { name: "epsilon" f: 1e-8 } arg { name: "weight_decay" f: 0.5 }
        arg { name: "decoupled" i: )") +
                               (decoupled ? "1" : "0") + "}"));
    AdamByHand adam{.beta1 = 0.8f,
                    .beta2 = 0.99f,
                    .epsilon = 1e-8f,
                    .weight_decay = 0.5,
                    .decoupled = decoupled};
    std::vector<double> w = {2, -4}, m1 = {0.1f, -0.2f}, m2 = {0.01f, 0.04f};
    const std::vector<double> g = {0.3f, 0.5f};
    for (int i = 0; i < 2; ++i) {
      const double before = w[i];
      adam.Step(-0.1f, 7, g[i], &w[i], &m1[i], &m2[i]);
      EXPECT_NEAR(Fetch<float>(ws, "w2")[i], w[i], 1e-6);
      // Caffe2's output_grad: the step before the rate scales it (and before any decay).
      const double decay = decoupled ? -0.1f * 0.5 * before : 0;
      EXPECT_NEAR(Fetch<float>(ws, "step")[i], (w[i] - before - decay) / -0.1f, 1e-5);
    }
    EXPECT_EQ(Fetch<float>(ws, "w"), (std::vector<float>{2, -4}));  // not in place here
  }
}

TEST(AdamTest, ErrorsNameTheBlobsAndTheArguments) {
  Workspace ws;
  Feed<float>(&ws, "w", {2}, {1, 1});
  Feed<float>(&ws, "m1", {2}, {0, 0});
  Feed<float>(&ws, "m2", {3}, {0, 0, 0});
  Feed<float>(&ws, "g", {2}, {1, 1});
  Feed<float>(&ws, "lr", {1}, {-0.1f});
  Feed<int64_t>(&ws, "iter", {1}, {0});
  std::string error = RunOpError(&ws, kAdam);
  EXPECT_TRUE(Contains(error, "input 'm2' float32[3] must have the type and shape of input 'w'"))
      << error;
  Feed<float>(&ws, "m2", {2}, {0, 0});
  Feed<int32_t>(&ws, "iter", {1}, {0});
  error = RunOpError(&ws, kAdam);
  EXPECT_TRUE(Contains(error, "op #0 (Adam ''): input 'iter' int32[1] must be int64")) << error;
  Feed<int64_t>(&ws, "iter", {2}, {0, 0});
  error = RunOpError(&ws, kAdam);
  EXPECT_TRUE(Contains(error, "iter 'iter' int64[2] must be an int64 with one element")) << error;
  Feed<int64_t>(&ws, "iter", {1}, {0});
  error = RunOpError(&ws, std::string(kAdam) + R"(arg { name: "beta2" f: 1 })");
  EXPECT_TRUE(Contains(error, "beta1 and beta2 must be in [0, 1)")) << error;
}

TEST(AdagradTest, StepsWithDecayAndWeightDecayAndItsOptionalOutputs) {
  Workspace ws;
  Feed<float>(&ws, "w", {2}, {1, -2});
  Feed<float>(&ws, "h", {2}, {0.5f, 0});
  Feed<float>(&ws, "g", {2}, {0.5f, -1});
  Feed<float>(&ws, "lr", {}, {-0.1f});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Adagrad" input: "w" input: "h" input: "g" input: "lr"
      output: "w" output: "h" output: "effective_lr" output: "update"
      arg { name: "epsilon" f: 1e-6 } arg { name: "decay" f: 0.9 }
      arg { name: "weight_decay" f: 0.1 })"));
  const double w[2] = {1, -2}, h[2] = {0.5f, 0}, g[2] = {0.5f, -1};
  for (int i = 0; i < 2; ++i) {
    const double gi = g[i] + 0.1f * w[i];
    const double hi = 0.9f * h[i] + gi * gi;
    const double effective = -0.1f / (std::sqrt(hi) + 1e-6f);
    EXPECT_NEAR(Fetch<float>(ws, "h")[i], hi, 1e-6);
    EXPECT_NEAR(Fetch<float>(ws, "effective_lr")[i], effective, 1e-6);
    EXPECT_NEAR(Fetch<float>(ws, "update")[i], effective * gi, 1e-6);
    EXPECT_NEAR(Fetch<float>(ws, "w")[i], w[i] + effective * gi, 1e-6);
  }
  // The second element's first step: about lr against the gradient's sign.
  EXPECT_NEAR(Fetch<float>(ws, "w")[1], -2 + 0.1, 1e-3);
}

TEST(AdagradTest, ErrorsNameTheBlobs) {
  Workspace ws;
  Feed<float>(&ws, "w", {2}, {1, 1});
  Feed<float>(&ws, "h", {2}, {0, 0});
  Feed<float>(&ws, "g", {2, 1}, {1, 1});
  Feed<float>(&ws, "lr", {2}, {-0.1f, 0});
  const char op[] = R"(type: "Adagrad" input: "w" input: "h" input: "g" input: "lr"
      output: "w" output: "h")";
  std::string error = RunOpError(&ws, op);
  EXPECT_TRUE(Contains(error, "input 'g' float32[2,1] must have the type and shape of input 'w'"))
      << error;
  Feed<float>(&ws, "g", {2}, {1, 1});
  error = RunOpError(&ws, op);
  EXPECT_TRUE(Contains(error, "lr 'lr' float32[2] must have one element")) << error;
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

TEST(LearningRateTest, MultiStepExpInvAndPolySchedules) {
  const std::string base = R"(arg { name: "base_lr" f: 0.5 } )";
  const std::string multistep = base + R"(arg { name: "policy" s: "multistep" }
      arg { name: "stepsizes" ints: [10, 25, 40] } arg { name: "gamma" f: 0.1 })";
  EXPECT_FLOAT_EQ(LearningRateAt(multistep, 9), 0.5f);
  EXPECT_FLOAT_EQ(LearningRateAt(multistep, 10), 0.05f);
  EXPECT_FLOAT_EQ(LearningRateAt(multistep, 24), 0.05f);
  EXPECT_FLOAT_EQ(LearningRateAt(multistep, 25), 0.005f);
  EXPECT_FLOAT_EQ(LearningRateAt(multistep, 1000), 0.0005f);
  const std::string exp = base + R"(arg { name: "policy" s: "exp" } arg { name: "gamma" f: 0.99 })";
  EXPECT_FLOAT_EQ(LearningRateAt(exp, 0), 0.5f);
  EXPECT_FLOAT_EQ(LearningRateAt(exp, 100), static_cast<float>(0.5 * std::pow(0.99f, 100)));
  const std::string inv = base + R"(arg { name: "policy" s: "inv" } arg { name: "gamma" f: 0.5 }
      arg { name: "power" f: 2 })";
  EXPECT_FLOAT_EQ(LearningRateAt(inv, 2), 0.5f / 4);  // (1 + 0.5 * 2)^-2
  const std::string poly = base + R"(arg { name: "policy" s: "poly" }
      arg { name: "max_iter" i: 100 } arg { name: "power" f: 0.5 })";
  EXPECT_FLOAT_EQ(LearningRateAt(poly, 0), 0.5f);
  EXPECT_FLOAT_EQ(LearningRateAt(poly, 75), 0.25f);  // sqrt(1 - 0.75)
  EXPECT_FLOAT_EQ(LearningRateAt(poly, 100), 0.f);
  EXPECT_FLOAT_EQ(LearningRateAt(poly, 150), 0.f);
}

TEST(LearningRateTest, BadArgumentsAreReportedWhenTheOpIsCreated) {
  Workspace ws;
  Feed<int64_t>(&ws, "iter", {1}, {0});
  auto error = [&](const std::string& args) {
    return RunOpError(&ws, R"(type: "LearningRate" input: "iter" output: "lr" )" + args);
  };
  EXPECT_TRUE(Contains(error(R"(arg { name: "base_lr" f: 1 } arg { name: "policy" s: "hill" })"),
                       "unknown learning rate policy 'hill'"));
  EXPECT_TRUE(Contains(error(R"(arg { name: "policy" s: "fixed" })"), "needs the `base_lr`"));
  EXPECT_TRUE(Contains(error(R"(arg { name: "base_lr" f: 1 } arg { name: "policy" s: "multistep" }
                                arg { name: "stepsizes" ints: [20, 10] } arg { name: "gamma" f: 0.1 })"),
                       "'multistep': needs ascending stepsizes"));
  EXPECT_TRUE(Contains(error(R"(arg { name: "base_lr" f: 1 } arg { name: "policy" s: "inv" }
                                arg { name: "gamma" f: 0.1 })"),
                       "'inv': needs power"));
  EXPECT_TRUE(Contains(error(R"(arg { name: "base_lr" f: 1 } arg { name: "policy" s: "poly" }
                                arg { name: "power" f: 1 })"),
                       "'poly': needs max_iter > 0"));
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
