// ReduceSum and ReduceMean: values against a naive reference over every axes subset, keepdims,
// integers, errors naming the argument and the blob, and gradients against finite differences.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string AxesArgs(const std::vector<int>& axes, bool keepdims) {
  std::string args = R"( arg { name: "axes")";
  for (int a : axes) args += " ints: " + std::to_string(a);
  return args + R"( } arg { name: "keepdims" i: )" + (keepdims ? "1" : "0") + " }";
}

// Sum (or mean) of x [d0, d1, d2] over the axes whose bit is set in `mask`, by visiting every
// element: the reference the kernel must match. Y is indexed with reduced axes at 0.
std::vector<double> NaiveReduce(const std::vector<float>& x, const std::vector<int64_t>& d,
                                int mask, bool mean) {
  std::vector<int64_t> y_dims(3);
  for (int k = 0; k < 3; ++k) y_dims[k] = (mask >> k) & 1 ? 1 : d[k];
  std::vector<double> y(y_dims[0] * y_dims[1] * y_dims[2], 0.0);
  int64_t count = 1;
  for (int k = 0; k < 3; ++k) count *= (mask >> k) & 1 ? d[k] : 1;
  for (int64_t i = 0; i < d[0]; ++i) {
    for (int64_t j = 0; j < d[1]; ++j) {
      for (int64_t k = 0; k < d[2]; ++k) {
        const int64_t yi = (mask & 1 ? 0 : i), yj = (mask & 2 ? 0 : j), yk = (mask & 4 ? 0 : k);
        y[(yi * y_dims[1] + yj) * y_dims[2] + yk] += x[(i * d[1] + j) * d[2] + k];
      }
    }
  }
  if (mean) {
    for (double& v : y) v /= static_cast<double>(count);
  }
  return y;
}

TEST(ReduceTest, EveryAxesSubsetMatchesANaiveLoop) {
  const std::vector<int64_t> dims = {3, 4, 5};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(60);
  for (float& v : x) v = dist(rng);
  for (const char* type : {"ReduceSum", "ReduceMean"}) {
    for (int mask = 1; mask < 8; ++mask) {
      for (bool keepdims : {true, false}) {
        Workspace ws;
        Feed<float>(&ws, "X", dims, x);
        std::vector<int> axes;
        std::vector<int64_t> y_dims;
        for (int k = 0; k < 3; ++k) {
          if ((mask >> k) & 1) axes.push_back(k - 3 * (k % 2));  // axis 1 given as -2
          if (!((mask >> k) & 1) || keepdims) y_dims.push_back((mask >> k) & 1 ? 1 : dims[k]);
        }
        const std::string op = std::string(R"(type: ")") + type + R"(" input: "X" output: "Y")" +
                               AxesArgs(axes, keepdims);
        ASSERT_TRUE(RunOp(&ws, op)) << op;
        EXPECT_EQ(ShapeOf(ws, "Y"), y_dims) << op;
        const std::vector<double> want =
            NaiveReduce(x, dims, mask, std::string(type) == "ReduceMean");
        const std::vector<float> got = Fetch<float>(ws, "Y");
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << op;
      }
    }
  }
}

TEST(ReduceTest, DefaultsReduceEveryAxisKeepingDims) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(RunOp(&ws, R"(type: "ReduceSum" input: "X" output: "S")"));
  EXPECT_EQ(ShapeOf(ws, "S"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(Fetch<float>(ws, "S"), (std::vector<float>{21}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "ReduceMean" input: "X" output: "M"
                            arg { name: "keepdims" i: 0 })"));
  EXPECT_EQ(ShapeOf(ws, "M"), (std::vector<int64_t>{}));
  EXPECT_EQ(Fetch<float>(ws, "M"), (std::vector<float>{3.5}));
}

TEST(ReduceTest, SumsIntegersAndEmptyAxes) {
  Workspace ws;
  Feed<int32_t>(&ws, "I", {2, 2}, {1, -2, 3, 4});
  ASSERT_TRUE(
      RunOp(&ws, R"(type: "ReduceSum" input: "I" output: "S" arg { name: "axes" ints: 0 })"));
  EXPECT_EQ(Fetch<int32_t>(ws, "S"), (std::vector<int32_t>{4, 2}));
  Feed<float>(&ws, "E", {0, 3}, {});
  ASSERT_TRUE(
      RunOp(&ws, R"(type: "ReduceSum" input: "E" output: "S" arg { name: "axes" ints: 0 })"));
  EXPECT_EQ(Fetch<float>(ws, "S"), (std::vector<float>{0, 0, 0}));
  const std::string mean =
      R"(type: "ReduceMean" input: "E" output: "M" arg { name: "axes" ints: 0 })";
  EXPECT_TRUE(Contains(RunOpError(&ws, mean), "cannot average over no elements of input 'E'"));
}

TEST(ReduceTest, ErrorsNameTheArgumentAndTheBlob) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, std::vector<float>(6, 1));
  EXPECT_TRUE(Contains(InferError(ws, R"(type: "ReduceSum" input: "X" output: "Y"
                                         arg { name: "axes" ints: 2 })"),
                       "argument 'axes' holds 2, out of range for input 'X' float32[2,3]"));
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "ReduceSum" input: "X" output: "Y"
                                          arg { name: "axes" ints: 1 ints: -1 })"),
                       "names axis 1 of input 'X' float32[2,3] twice"));
  Feed<int32_t>(&ws, "I", {2}, {1, 2});
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "ReduceMean" input: "I" output: "Y")"),
                       "input 'I' int32[2] must be float32"));
}

TEST(ReduceGradientTest, MatchesFiniteDifferences) {
  Workspace ws;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(2 * 3 * 4);
  for (float& v : x) v = dist(rng);
  Feed<float>(&ws, "X", {2, 3, 4}, x);
  for (const char* type : {"ReduceSum", "ReduceMean"}) {
    for (const std::string& args :
         {std::string(""), AxesArgs({0, 2}, true), AxesArgs({1}, false), AxesArgs({-1}, false)}) {
      const std::string op =
          std::string(R"(type: ")") + type + R"(" input: "X" output: "Y")" + args;
      EXPECT_TRUE(CheckGradient(ParseOp(op), &ws)) << op;
    }
  }
}

TEST(ReduceGradientTest, SpreadsDYAndChecksItsShape) {
  Workspace ws;
  Feed<float>(&ws, "dY", {2}, {1, 2});
  Feed<float>(&ws, "X", {2, 2}, {0, 0, 0, 0});
  ASSERT_TRUE(RunOp(&ws, R"(type: "ReduceMeanGradient" input: "dY" input: "X" output: "dX"
                            arg { name: "axes" ints: 0 } arg { name: "keepdims" i: 0 })"));
  EXPECT_EQ(Fetch<float>(ws, "dX"), (std::vector<float>{0.5, 1, 0.5, 1}));
  EXPECT_TRUE(Contains(InferError(ws, R"(type: "ReduceSumGradient" input: "dY" input: "X"
                                         output: "dX" arg { name: "axes" ints: 0 })"),
                       "dY 'dY' float32[2] must be float32[1,2]"));
}

}  // namespace
}  // namespace braid::test
