#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ops/op_test_util.h"

namespace braid::test {
namespace {

std::vector<float> RandomValues(std::mt19937* rng, size_t n) {
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(*rng);
  return v;
}

// Y[i, j] = b[j] + sum_k X[i, k] W[j, k], in double.
std::vector<float> NaiveFc(const std::vector<float>& x, const std::vector<float>& w,
                           const std::vector<float>& b, int m, int k, int n) {
  std::vector<float> y(static_cast<size_t>(m) * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double acc = b[j];
      for (int p = 0; p < k; ++p) acc += static_cast<double>(x[i * k + p]) * w[j * k + p];
      y[i * n + j] = static_cast<float>(acc);
    }
  }
  return y;
}

void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected, float tol) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], tol) << "element " << i;
  }
}

// Runs FC on random X [x_dims], W [n, k], b [n] and compares with the naive loop.
void CheckAgainstNaive(std::vector<int64_t> x_dims, int m, int k, int n, const std::string& args) {
  const unsigned seed = 1234u + static_cast<unsigned>(m * 31 + k * 7 + n);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::vector<float> x = RandomValues(&rng, static_cast<size_t>(m) * k);
  std::vector<float> w = RandomValues(&rng, static_cast<size_t>(n) * k);
  std::vector<float> b = RandomValues(&rng, n);
  Workspace ws;
  Feed<float>(&ws, "X", x_dims, x);
  Feed<float>(&ws, "W", {n, k}, w);
  Feed<float>(&ws, "b", {n}, b);
  ASSERT_TRUE(RunOp(&ws, R"(type: "FC" input: "X" input: "W" input: "b" output: "Y" )" + args));
  ExpectNear(Fetch<float>(ws, "Y"), NaiveFc(x, w, b, m, k, n), 1e-4f * std::sqrt(k));
}

TEST(MathOpsTest, FCMatchesNaiveLoopOnSmallMatrices) { CheckAgainstNaive({7, 13}, 7, 13, 5, ""); }

TEST(MathOpsTest, FCMatchesNaiveLoopOnLargerMatrices) {
  CheckAgainstNaive({64, 300}, 64, 300, 96, "");
}

TEST(MathOpsTest, FCFlattensTrailingDimsAtDefaultAxis) {
  CheckAgainstNaive({4, 3, 2}, 4, 6, 5, "");
  Workspace ws;
  Feed<float>(&ws, "X", {4, 3, 2}, std::vector<float>(24, 1.f));
  Feed<float>(&ws, "W", {5, 6}, std::vector<float>(30, 1.f));
  Feed<float>(&ws, "b", {5}, std::vector<float>(5, 0.5f));
  ASSERT_TRUE(RunOp(&ws, R"(type: "FC" input: "X" input: "W" input: "b" output: "Y")"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(Fetch<float>(ws, "Y"), std::vector<float>(20, 6.5f));
}

TEST(MathOpsTest, FCKeepsLeadingDimsBeforeAxis) {
  CheckAgainstNaive({2, 3, 4}, 6, 4, 5, R"(arg { name: "axis" i: 2 })");
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3, 4}, std::vector<float>(24, 1.f));
  Feed<float>(&ws, "W", {5, 4}, std::vector<float>(20, 1.f));
  Feed<float>(&ws, "b", {5}, std::vector<float>(5, 0.f));
  ASSERT_TRUE(RunOp(&ws, R"(type: "FC" input: "X" input: "W" input: "b" output: "Y"
      arg { name: "axis" i: -1 })"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{2, 3, 5}));
}

TEST(MathOpsTest, FCComputesHandWorkedValues) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 2}, {1, 2, 3, 4});
  Feed<float>(&ws, "W", {3, 2}, {1, 0, 0, 1, 1, -1});
  Feed<float>(&ws, "b", {3}, {10, 20, 30});
  ASSERT_TRUE(RunOp(&ws, R"(type: "FC" input: "X" input: "W" input: "b" output: "Y")"));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{11, 22, 29, 13, 24, 29}));
}

TEST(MathOpsTest, FCInnerSizeMismatchNamesXAndW) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, std::vector<float>(6, 1.f));
  Feed<float>(&ws, "W", {4, 5}, std::vector<float>(20, 1.f));
  Feed<float>(&ws, "b", {4}, std::vector<float>(4, 1.f));
  const std::string op = R"(type: "FC" name: "fc1" input: "X" input: "W" input: "b" output: "Y")";
  std::string error = RunOpError(&ws, op);
  EXPECT_NE(error.find("op #0 (FC 'fc1')"), std::string::npos) << error;
  EXPECT_NE(error.find("'X' float32[2,3] has K=3"), std::string::npos) << error;
  EXPECT_NE(error.find("'W' float32[4,5] has 5"), std::string::npos) << error;
  EXPECT_NE(InferError(ws, op).find("'W' float32[4,5]"), std::string::npos);
}

TEST(MathOpsTest, FCBiasSizeMismatchNamesB) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, std::vector<float>(6, 1.f));
  Feed<float>(&ws, "W", {4, 3}, std::vector<float>(12, 1.f));
  Feed<float>(&ws, "bias", {3}, std::vector<float>(3, 1.f));
  std::string error =
      RunOpError(&ws, R"(type: "FC" input: "X" input: "W" input: "bias" output: "Y")");
  EXPECT_NE(error.find("'bias' float32[3] must have N=4"), std::string::npos) << error;
}

TEST(MathOpsTest, FCRejectsNonFloatInput) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, std::vector<float>(6, 1.f));
  Feed<int32_t>(&ws, "W", {4, 3}, std::vector<int32_t>(12, 1));
  Feed<float>(&ws, "b", {4}, std::vector<float>(4, 1.f));
  std::string error = RunOpError(&ws, R"(type: "FC" input: "X" input: "W" input: "b" output: "Y")");
  EXPECT_NE(error.find("'W' int32[4,3] must be float32"), std::string::npos) << error;
}

}  // namespace
}  // namespace braid::test
