// SpatialBN and SpatialBNGradient: inference and training against the formula, running
// statistics, train vs is_test, in-place rules, shape inference against the kernel, errors,
// numerical gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "braid/status.h"
#include "ops/nn/dnnl_util.h"
#include "ops/op_test_util.h"
#include "runtime/core/gradient.h"
#include "runtime/exec/net.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;
using ::braid::testing::GradientCheckOptions;

const char* const kTrainOp = R"(type: "SpatialBN" input: "X" input: "scale" input: "bias"
    input: "rm" input: "rv" output: "Y" output: "rm" output: "rv" output: "saved_mean"
    output: "saved_inv_var")";
const char* const kTestOp = R"(type: "SpatialBN" input: "X" input: "scale" input: "bias"
    input: "rm" input: "rv" output: "Y" arg { name: "is_test" i: 1 })";

std::vector<float> RandomValues(std::mt19937* rng, int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> uniform(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(*rng);
  return v;
}

// X [n, c, spatial] (as given by `dims`), scale, bias, running mean and variance, from `seed`.
void FeedBnInputs(const std::vector<int64_t>& dims, unsigned seed, Workspace* ws) {
  std::mt19937 rng(seed);
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  const int64_t c = dims[1];
  Feed<float>(ws, "X", dims, RandomValues(&rng, count, -2.f, 3.f));
  Feed<float>(ws, "scale", {c}, RandomValues(&rng, c, 0.5f, 1.5f));
  Feed<float>(ws, "bias", {c}, RandomValues(&rng, c, -1.f, 1.f));
  Feed<float>(ws, "rm", {c}, RandomValues(&rng, c, -0.5f, 0.5f));
  Feed<float>(ws, "rv", {c}, RandomValues(&rng, c, 0.5f, 2.f));
}

struct Moments {
  std::vector<double> mean, var;  // var is biased (divided by the count)
};

Moments BatchMoments(const std::vector<float>& x, int64_t n, int64_t c, int64_t spatial) {
  Moments m{std::vector<double>(c), std::vector<double>(c)};
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t s = 0; s < spatial; ++s) sum += x[(i * c + ch) * spatial + s];
    }
    m.mean[ch] = sum / (n * spatial);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t s = 0; s < spatial; ++s) {
        const double d = x[(i * c + ch) * spatial + s] - m.mean[ch];
        sq += d * d;
      }
    }
    m.var[ch] = sq / (n * spatial);
  }
  return m;
}

// scale * (x - mean) / sqrt(var + eps) + bias per channel.
std::vector<float> Normalize(const std::vector<float>& x, int64_t c, int64_t spatial,
                             const std::vector<double>& mean, const std::vector<double>& var,
                             const std::vector<float>& scale, const std::vector<float>& bias,
                             double eps) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t ch = static_cast<int64_t>(i) / spatial % c;
    y[i] = static_cast<float>(scale[ch] * (x[i] - mean[ch]) / std::sqrt(var[ch] + eps) + bias[ch]);
  }
  return y;
}

void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected, float tol) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) ASSERT_NEAR(actual[i], expected[i], tol) << i;
}

std::vector<double> Widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

TEST(SpatialBNTest, InferenceUsesTheRunningStatistics) {
  Workspace ws;
  FeedBnInputs({2, 3, 4, 5}, 51, &ws);
  ASSERT_TRUE(RunOp(&ws, std::string(kTestOp) + R"( arg { name: "epsilon" f: 0.01 })"));
  ExpectNear(Fetch<float>(ws, "Y"),
             Normalize(Fetch<float>(ws, "X"), 3, 20, Widen(Fetch<float>(ws, "rm")),
                       Widen(Fetch<float>(ws, "rv")), Fetch<float>(ws, "scale"),
                       Fetch<float>(ws, "bias"), 0.01),
             1e-5f);
}

TEST(SpatialBNTest, TrainingNormalizesWithTheBatchStatisticsAndUpdatesTheRunningOnes) {
  Workspace ws;
  FeedBnInputs({3, 4, 5, 2}, 52, &ws);
  const std::vector<float> x = Fetch<float>(ws, "X");
  const std::vector<float> rm = Fetch<float>(ws, "rm"), rv = Fetch<float>(ws, "rv");
  ASSERT_TRUE(RunOp(&ws, std::string(kTrainOp) + R"( arg { name: "momentum" f: 0.8 })"));
  const Moments m = BatchMoments(x, 3, 4, 10);
  ExpectNear(
      Fetch<float>(ws, "Y"),
      Normalize(x, 4, 10, m.mean, m.var, Fetch<float>(ws, "scale"), Fetch<float>(ws, "bias"), 1e-5),
      1e-4f);
  const std::vector<float> saved_mean = Fetch<float>(ws, "saved_mean");
  const std::vector<float> saved_inv_var = Fetch<float>(ws, "saved_inv_var");
  const std::vector<float> new_rm = Fetch<float>(ws, "rm"), new_rv = Fetch<float>(ws, "rv");
  for (int ch = 0; ch < 4; ++ch) {
    EXPECT_NEAR(saved_mean[ch], m.mean[ch], 1e-5);
    EXPECT_NEAR(saved_inv_var[ch], 1 / std::sqrt(m.var[ch] + 1e-5), 1e-4);
    EXPECT_NEAR(new_rm[ch], 0.8 * rm[ch] + 0.2 * m.mean[ch], 1e-5);
    // The running variance takes the unbiased batch variance (30 values per channel).
    EXPECT_NEAR(new_rv[ch], 0.8 * rv[ch] + 0.2 * m.var[ch] * 30 / 29, 1e-5);
  }
}

// With the running statistics set to the batch's mean and biased variance, is_test reproduces
// the training output.
TEST(SpatialBNTest, TrainingAndInferenceAgreeOnTheBatchStatistics) {
  Workspace ws;
  FeedBnInputs({4, 2, 3, 3}, 53, &ws);
  ASSERT_TRUE(RunOp(&ws, kTrainOp));
  const std::vector<float> y_train = Fetch<float>(ws, "Y");
  const Moments m = BatchMoments(Fetch<float>(ws, "X"), 4, 2, 9);
  Feed<float>(&ws, "rm", {2}, {static_cast<float>(m.mean[0]), static_cast<float>(m.mean[1])});
  Feed<float>(&ws, "rv", {2}, {static_cast<float>(m.var[0]), static_cast<float>(m.var[1])});
  ASSERT_TRUE(RunOp(&ws, kTestOp));
  ExpectNear(Fetch<float>(ws, "Y"), y_train, 1e-5f);
}

// C a multiple of 8 or 16 runs on oneDNN's channel-blocked kernel (reorders inside the op); Y is
// still plain NCHW, in place or not.
TEST(SpatialBNTest, ChannelBlockedLayoutsMatchTheFormulaInPlaceOrNot) {
  for (const int64_t c : {8, 16, 48}) {
    Workspace ws;
    FeedBnInputs({2, c, 3, 5}, 58, &ws);
    const std::vector<float> x = Fetch<float>(ws, "X");
    ASSERT_TRUE(RunOp(&ws, kTestOp));
    ExpectNear(Fetch<float>(ws, "Y"),
               Normalize(x, c, 15, Widen(Fetch<float>(ws, "rm")), Widen(Fetch<float>(ws, "rv")),
                         Fetch<float>(ws, "scale"), Fetch<float>(ws, "bias"), 1e-5),
               1e-5f);
    ASSERT_TRUE(RunOp(&ws, kTrainOp));
    const Moments m = BatchMoments(x, 2, c, 15);
    const std::vector<float> expected = Normalize(
        x, c, 15, m.mean, m.var, Fetch<float>(ws, "scale"), Fetch<float>(ws, "bias"), 1e-5);
    ExpectNear(Fetch<float>(ws, "Y"), expected, 1e-4f);
    const std::vector<float> saved_mean = Fetch<float>(ws, "saved_mean");
    for (int64_t ch = 0; ch < c; ++ch) EXPECT_NEAR(saved_mean[ch], m.mean[ch], 1e-5) << c;
    std::string in_place = kTrainOp;
    in_place.replace(in_place.find("output: \"Y\""), 11, "output: \"X\"");
    ASSERT_TRUE(RunOp(&ws, in_place));
    ExpectNear(Fetch<float>(ws, "X"), expected, 1e-4f);
  }
}

// 4 x 16 x 400 x 400: inference runs two samples at a time (BatchChunk) and still normalizes
// every sample with the running statistics.
TEST(SpatialBNTest, InferenceOnALargeBatchRunsInChunks) {
  Workspace ws;
  FeedBnInputs({4, 16, 400, 400}, 31, &ws);
  Net* net = ws.CreateNet(NetOf({kTestOp}));
  ASSERT_TRUE(net->Run().ok());
  EXPECT_LE(net->scratch_bytes(), static_cast<size_t>(kChunkScratchBytes));
  ExpectNear(Fetch<float>(ws, "Y"),
             Normalize(Fetch<float>(ws, "X"), 16, 160000, Widen(Fetch<float>(ws, "rm")),
                       Widen(Fetch<float>(ws, "rv")), Fetch<float>(ws, "scale"),
                       Fetch<float>(ws, "bias"), 1e-5),
             1e-4f);
}

TEST(SpatialBNTest, AcceptsInputsWithOneOrThreeSpatialDims) {
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{5, 3, 7}, std::vector<int64_t>{2, 3, 2, 3, 4}}) {
    Workspace ws;
    FeedBnInputs(dims, 54, &ws);
    ASSERT_TRUE(RunOp(&ws, kTrainOp));
    const int64_t spatial = dims.size() == 3 ? 7 : 24;
    const Moments m = BatchMoments(Fetch<float>(ws, "X"), dims[0], 3, spatial);
    ExpectNear(Fetch<float>(ws, "Y"),
               Normalize(Fetch<float>(ws, "X"), 3, spatial, m.mean, m.var,
                         Fetch<float>(ws, "scale"), Fetch<float>(ws, "bias"), 1e-5),
               1e-4f);
  }
}

// Each epsilon gets its own cached primitive, even ones that print alike ("0.000000").
TEST(SpatialBNTest, EpsilonsCloseTogetherGetTheirOwnPrimitives) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 1, 1, 2}, {1e-3f, -1e-3f});
  Feed<float>(&ws, "scale", {1}, {1});
  Feed<float>(&ws, "bias", {1}, {0});
  Feed<float>(&ws, "rm", {1}, {0});
  Feed<float>(&ws, "rv", {1}, {0});
  ASSERT_TRUE(RunOp(&ws, std::string(kTestOp) + R"( arg { name: "epsilon" f: 1e-7 })"));
  ExpectNear(Fetch<float>(ws, "Y"), {3.16228f, -3.16228f}, 1e-3f);  // 1e-3 / sqrt(1e-7)
  ASSERT_TRUE(RunOp(&ws, std::string(kTestOp) + R"( arg { name: "epsilon" f: 4e-7 })"));
  ExpectNear(Fetch<float>(ws, "Y"), {1.58114f, -1.58114f}, 1e-3f);
}

TEST(SpatialBNTest, RunsInPlaceOnX) {
  Workspace ws;
  FeedBnInputs({2, 3, 4, 4}, 55, &ws);
  ASSERT_TRUE(RunOp(&ws, kTestOp));
  const std::vector<float> expected = Fetch<float>(ws, "Y");
  ASSERT_TRUE(RunOp(&ws, R"(type: "SpatialBN" input: "X" input: "scale" input: "bias"
      input: "rm" input: "rv" output: "X" arg { name: "is_test" i: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "X"), expected);
}

TEST(SpatialBNTest, RequiresTheRunningStatisticsInPlace) {
  Workspace ws;
  FeedBnInputs({2, 3, 4, 4}, 56, &ws);
  const std::string error = RunOpError(&ws, R"(type: "SpatialBN" input: "X" input: "scale"
      input: "bias" input: "rm" input: "rv" output: "Y" output: "rm2" output: "rv"
      output: "sm" output: "siv")");
  EXPECT_NE(error.find("input 3 ('rm') and output 1 ('rm2') must be the same blob"),
            std::string::npos)
      << error;
}

void ExpectError(Workspace* ws, const std::string& op, const std::string& fragment) {
  const std::string infer = InferError(*ws, op);
  EXPECT_NE(infer.find(fragment), std::string::npos) << infer;
  const std::string run = RunOpError(ws, op);
  EXPECT_NE(run.find(infer), std::string::npos) << run;
}

TEST(SpatialBNTest, RejectsMismatchedShapesAndOutputCounts) {
  Workspace ws;
  FeedBnInputs({2, 3, 4, 4}, 57, &ws);
  ExpectError(&ws, R"(type: "SpatialBN" input: "X" input: "scale" input: "bias" input: "rm"
                      input: "rv" output: "Y")",
              "SpatialBN with is_test=0 writes Y, running_mean, running_var, saved_mean, "
              "saved_inv_var, but names 1 outputs");
  ExpectError(&ws, std::string(kTestOp) + R"( arg { name: "order" s: "NHWC" })",
              "order 'NHWC' is not supported");
  Feed<float>(&ws, "scale", {4}, {1, 1, 1, 1});
  ExpectError(&ws, kTestOp,
              "input 'scale' float32[4] must be float32[3], one value per channel of X 'X' "
              "float32[2,3,4,4]");
  Feed<float>(&ws, "scale", {3}, {1, 1, 1});
  Feed<float>(&ws, "X", {1, 3, 1, 1}, {1, 2, 3});
  ExpectError(&ws, kTrainOp, "training SpatialBN needs more than one value per channel");
}

// ---- SpatialBNApply ----

// From a training SpatialBN's input and saved statistics it recomputes that op's output (blocked
// and plain layouts), with a residual added and a ReLU applied as a ResNet block's output is.
TEST(SpatialBNApplyTest, RecomputesTheTrainingOutputWithResidualAndRelu) {
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{3, 2, 3, 3}, std::vector<int64_t>{2, 16, 5, 4}}) {
    Workspace ws;
    FeedBnInputs(dims, 23, &ws);
    ASSERT_TRUE(ws.RunNetOnce(NetOf({kTrainOp})).ok());
    const std::vector<float> y = Fetch<float>(ws, "Y");
    std::mt19937 rng(5);
    const std::vector<float> residual = RandomValues(&rng, static_cast<int64_t>(y.size()), -1, 1);
    Feed<float>(&ws, "R", dims, residual);
    const std::string inputs = R"(type: "SpatialBNApply" input: "X" input: "scale"
        input: "bias" input: "saved_mean" input: "saved_inv_var" )";
    ASSERT_TRUE(ws.RunNetOnce(NetOf({inputs + R"(output: "A")",
                                     inputs + R"(input: "R" output: "B" arg { name: "relu" i: 1 })"}))
                    .ok());
    std::vector<float> expected_b(y.size());
    for (size_t i = 0; i < y.size(); ++i) expected_b[i] = std::max(y[i] + residual[i], 0.f);
    ExpectNear(Fetch<float>(ws, "A"), y, 1e-5f);
    ExpectNear(Fetch<float>(ws, "B"), expected_b, 1e-5f);
  }
}

TEST(SpatialBNApplyTest, RejectsAResidualOfAnotherShape) {
  Workspace ws;
  FeedBnInputs({2, 3, 4, 4}, 57, &ws);
  Feed<float>(&ws, "R", {2, 3, 4, 5}, std::vector<float>(120, 0.f));
  ExpectError(&ws, R"(type: "SpatialBNApply" input: "X" input: "scale" input: "bias" input: "rm"
                      input: "rv" input: "R" output: "Y")",
              "residual 'R' float32[2,3,4,5] must be float32 of X's shape 'X' float32[2,3,4,4]");
}

// ---- gradients ----

TEST(SpatialBNGradientTest, MatchesNumericalGradient) {
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{3, 2, 3, 3}, std::vector<int64_t>{4, 3, 5},
        std::vector<int64_t>{2, 8, 2, 3}, std::vector<int64_t>{2, 16, 3, 2}}) {  // plain, blocked
    Workspace ws;
    FeedBnInputs(dims, 61, &ws);
    GradientCheckOptions options;
    options.inputs = {0, 1, 2};
    options.outputs = {0};
    options.seed = 61;
    EXPECT_TRUE(CheckGradient(ParseOp(kTrainOp), &ws, options));
  }
}

TEST(SpatialBNGradientTest, MakerNeedsTrainingMode) {
  const GradientMaker* maker = FindGradientMaker("SpatialBN");
  ASSERT_NE(maker, nullptr);
  const OperatorDef op = ParseOp(kTestOp);
  try {
    (*maker)(GradientRequest{op, {"Y_grad"}, {"X_grad", "scale_grad", "bias_grad", "", ""}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("is_test=1: its gradient is defined in training mode"),
              std::string::npos)
        << e.what();
  }
}

TEST(SpatialBNGradientTest, EmptyBatchGivesZeroScaleAndBiasGradients) {
  Workspace ws;
  FeedBnInputs({2, 3, 4, 4}, 63, &ws);
  Feed<float>(&ws, "X", {0, 3, 4, 4}, {});
  ASSERT_TRUE(RunOp(&ws, R"(type: "SpatialBNGradient" input: "X" input: "scale" input: "X"
                            input: "rm" input: "rv" output: "dX" output: "dscale" output: "dbias")"));
  EXPECT_EQ(ShapeOf(ws, "dX"), (std::vector<int64_t>{0, 3, 4, 4}));
  EXPECT_EQ(Fetch<float>(ws, "dscale"), std::vector<float>(3, 0.f));
  EXPECT_EQ(Fetch<float>(ws, "dbias"), std::vector<float>(3, 0.f));
}

TEST(SpatialBNGradientTest, RejectsDyOfTheWrongShape) {
  Workspace ws;
  FeedBnInputs({2, 3, 4, 4}, 62, &ws);
  Feed<float>(&ws, "dY", {2, 3, 4, 3}, std::vector<float>(72, 0.f));
  ExpectError(&ws, R"(type: "SpatialBNGradient" input: "X" input: "scale" input: "dY"
                      input: "rm" input: "rv" output: "dX" output: "dscale" output: "dbias")",
              "dY 'dY' float32[2,3,4,3] must have the type and shape of X 'X' float32[2,3,4,4]");
}

}  // namespace
}  // namespace braid::test
