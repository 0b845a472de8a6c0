// Sigmoid, Tanh, Softmax and their gradient ops: values against naive references, shape
// inference against the kernels (RunOp), in-place use and error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/layers/layer_test_util.h"

namespace braid::test {
namespace {

// Softmax of each row of x [rows, cols], in double.
std::vector<float> NaiveSoftmax(const std::vector<float>& x, int rows, int cols) {
  std::vector<float> y(x.size());
  for (int r = 0; r < rows; ++r) {
    double max = x[r * cols];
    for (int c = 0; c < cols; ++c) max = std::max<double>(max, x[r * cols + c]);
    double sum = 0;
    for (int c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c] - max);
    for (int c = 0; c < cols; ++c) y[r * cols + c] = std::exp(x[r * cols + c] - max) / sum;
  }
  return y;
}

TEST(SigmoidTest, MatchesTheFormulaIncludingLargeInputs) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, {-100, -1, 0, 0.5, 3, 100});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Sigmoid" input: "X" output: "Y")"));
  std::vector<float> expected;
  for (float x : {-100.f, -1.f, 0.f, 0.5f, 3.f, 100.f}) expected.push_back(1 / (1 + std::exp(-x)));
  ExpectNear(Fetch<float>(ws, "Y"), expected, 1e-6f);
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{2, 3}));
}

TEST(SigmoidTest, RunsInPlace) {
  Workspace ws;
  Feed<float>(&ws, "X", {2}, {0, 2});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Sigmoid" input: "X" output: "X")"));
  ExpectNear(Fetch<float>(ws, "X"), {0.5f, 1 / (1 + std::exp(-2.f))}, 1e-6f);
}

TEST(SigmoidTest, RejectsIntegersNamingTheBlob) {
  Workspace ws;
  Feed<int32_t>(&ws, "ints", {2}, {1, 2});
  const std::string op = R"(type: "Sigmoid" input: "ints" output: "Y")";
  EXPECT_TRUE(Contains(RunOpError(&ws, op), "input 'ints' int32[2] must be float32"));
  EXPECT_TRUE(Contains(InferError(ws, op), "input 'ints' int32[2] must be float32"));
}

TEST(TanhTest, MatchesStdTanhAndRunsInPlace) {
  Workspace ws;
  const std::vector<float> x = RandomFloats(7, 12, -4.f, 4.f);
  Feed<float>(&ws, "X", {3, 4}, x);
  ASSERT_TRUE(RunOp(&ws, R"(type: "Tanh" input: "X" output: "Y")"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Tanh" input: "X" output: "X")"));
  std::vector<float> expected;
  for (float v : x) expected.push_back(std::tanh(v));
  ExpectNear(Fetch<float>(ws, "Y"), expected, 1e-6f);
  ExpectNear(Fetch<float>(ws, "X"), expected, 1e-6f);
}

TEST(SigmoidTanhGradientTest, ComputeFromTheOutputAndRunInPlaceOnDY) {
  Workspace ws;
  Feed<float>(&ws, "Y", {3}, {0.25, 0.5, -0.5});
  Feed<float>(&ws, "dY", {3}, {1, 2, 4});
  ASSERT_TRUE(RunOp(&ws, R"(type: "SigmoidGradient" input: "Y" input: "dY" output: "dS")"));
  ExpectNear(Fetch<float>(ws, "dS"), {0.25f * 0.75f, 2 * 0.25f, 4 * -0.5f * 1.5f}, 1e-6f);
  ASSERT_TRUE(RunOp(&ws, R"(type: "TanhGradient" input: "Y" input: "dY" output: "dY")"));
  ExpectNear(Fetch<float>(ws, "dY"), {1 - 0.0625f, 2 * 0.75f, 4 * 0.75f}, 1e-6f);
}

TEST(SigmoidTanhGradientTest, ShapeMismatchNamesBothBlobs) {
  Workspace ws;
  Feed<float>(&ws, "Y", {2, 2}, {0, 0, 0, 0});
  Feed<float>(&ws, "dY", {4}, {0, 0, 0, 0});
  const std::string op = R"(type: "TanhGradient" input: "Y" input: "dY" output: "dX")";
  const std::string error = RunOpError(&ws, op);
  EXPECT_TRUE(Contains(error, "'dY' float32[4]")) << error;
  EXPECT_TRUE(Contains(error, "'Y' float32[2,2]")) << error;
  EXPECT_TRUE(Contains(InferError(ws, op), "'dY' float32[4]"));
}

TEST(SoftmaxTest, RowsMatchNaiveSoftmaxAndSumToOne) {
  Workspace ws;
  const std::vector<float> x = RandomFloats(3, 12, -3.f, 3.f);
  Feed<float>(&ws, "X", {3, 4}, x);
  ASSERT_TRUE(RunOp(&ws, R"(type: "Softmax" input: "X" output: "Y")"));
  const std::vector<float> y = Fetch<float>(ws, "Y");
  ExpectNear(y, NaiveSoftmax(x, 3, 4), 1e-6f);
  for (int r = 0; r < 3; ++r)
    EXPECT_NEAR(y[r * 4] + y[r * 4 + 1] + y[r * 4 + 2] + y[r * 4 + 3], 1, 1e-6);
}

TEST(SoftmaxTest, AxisTwoNormalisesTheTrailingDim) {
  Workspace ws;
  const std::vector<float> x = RandomFloats(4, 24);
  Feed<float>(&ws, "X", {2, 3, 4}, x);
  ASSERT_TRUE(RunOp(&ws, R"(type: "Softmax" input: "X" output: "Y" arg { name: "axis" i: 2 })"));
  ExpectNear(Fetch<float>(ws, "Y"), NaiveSoftmax(x, 6, 4), 1e-6f);
  ASSERT_TRUE(RunOp(&ws, R"(type: "Softmax" input: "X" output: "Z")"));
  ExpectNear(Fetch<float>(ws, "Z"), NaiveSoftmax(x, 2, 12), 1e-6f);
}

TEST(SoftmaxTest, LargeLogitsDoNotOverflowAndInPlaceWorks) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 3}, {1000, 1000, 999});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Softmax" input: "X" output: "X")"));
  const double e = std::exp(-1.0);
  ExpectNear(Fetch<float>(ws, "X"),
             {static_cast<float>(1 / (2 + e)), static_cast<float>(1 / (2 + e)),
              static_cast<float>(e / (2 + e))},
             1e-6f);
}

TEST(SoftmaxTest, AxisOutOfRangeNamesTheArgument) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, std::vector<float>(6, 0));
  const std::string op = R"(type: "Softmax" input: "X" output: "Y" arg { name: "axis" i: 2 })";
  EXPECT_TRUE(Contains(RunOpError(&ws, op), "argument 'axis' = 2 is out of range for 2 dims"));
  EXPECT_TRUE(Contains(InferError(ws, op), "argument 'axis' = 2"));
}

TEST(SoftmaxGradientTest, MatchesTheJacobianProduct) {
  Workspace ws;
  const std::vector<float> x = RandomFloats(5, 6);
  const std::vector<float> dy = RandomFloats(6, 6);
  const std::vector<float> y = NaiveSoftmax(x, 2, 3);
  Feed<float>(&ws, "Y", {2, 3}, y);
  Feed<float>(&ws, "dY", {2, 3}, dy);
  ASSERT_TRUE(RunOp(&ws, R"(type: "SoftmaxGradient" input: "Y" input: "dY" output: "dX")"));
  std::vector<float> expected(6);
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < 3; ++i) {
      double sum = 0;  // dX_i = sum_j dY_j dY_j/dX_i = sum_j dY_j Y_j (delta_ij - Y_i)
      for (int j = 0; j < 3; ++j) sum += dy[r * 3 + j] * y[r * 3 + j] * ((i == j) - y[r * 3 + i]);
      expected[r * 3 + i] = static_cast<float>(sum);
    }
  }
  ExpectNear(Fetch<float>(ws, "dX"), expected, 1e-6f);
  ASSERT_TRUE(RunOp(&ws, R"(type: "SoftmaxGradient" input: "Y" input: "dY" output: "dY")"));
  ExpectNear(Fetch<float>(ws, "dY"), expected, 1e-6f);
}

}  // namespace
}  // namespace braid::test
