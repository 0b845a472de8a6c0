// PRelu and PReluGradient: per-channel and shared slopes (NCHW, NHWC, 2-D), in place, errors,
// numerical gradients of X and Slope, and the refusal to differentiate an in-place PRelu.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "runtime/core/autodiff.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;

// Values a multiple of 0.01 away from 0 by at least 0.05, so finite differences never cross it.
std::vector<float> AwayFromZero(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> pick(5, 150);
  std::vector<float> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = 0.01f * pick(rng) * (i % 3 == 0 ? 1.f : -1.f);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

std::vector<float> NaivePRelu(const std::vector<float>& x, const std::vector<float>& slope,
                              int64_t channels, int64_t inner) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float a = slope.size() == 1 ? slope[0] : slope[(i / inner) % channels];
    y[i] = x[i] > 0 ? x[i] : a * x[i];
  }
  return y;
}

TEST(PReluOpTest, PerChannelSlopesNchw) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3, 2, 2}, AwayFromZero(24, 1));
  Feed<float>(&ws, "S", {3}, {0.1f, -0.5f, 2.f});
  ASSERT_TRUE(RunOp(&ws, R"(type: "PRelu" input: "X" input: "S" output: "Y")"));
  EXPECT_EQ(Fetch<float>(ws, "Y"), NaivePRelu(Fetch<float>(ws, "X"), Fetch<float>(ws, "S"), 3, 4));
}

TEST(PReluOpTest, PerChannelSlopesNhwcAnd2D) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 2, 2, 3}, AwayFromZero(24, 2));
  Feed<float>(&ws, "S", {3}, {0.1f, -0.5f, 2.f});
  ASSERT_TRUE(RunOp(&ws, R"(type: "PRelu" input: "X" input: "S" output: "Y"
      arg { name: "order" s: "NHWC" })"));
  EXPECT_EQ(Fetch<float>(ws, "Y"), NaivePRelu(Fetch<float>(ws, "X"), Fetch<float>(ws, "S"), 3, 1));
  Feed<float>(&ws, "X2", {4, 3}, AwayFromZero(12, 3));
  ASSERT_TRUE(RunOp(&ws, R"(type: "PRelu" input: "X2" input: "S" output: "Y2")"));
  EXPECT_EQ(Fetch<float>(ws, "Y2"),
            NaivePRelu(Fetch<float>(ws, "X2"), Fetch<float>(ws, "S"), 3, 1));
}

TEST(PReluOpTest, SharedSlopeInPlace) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 5}, {-2, -1, 0, 1, 2, -4, 3, -0.5f, 0.25f, 7});
  Feed<float>(&ws, "S", {1}, {0.25f});
  ASSERT_TRUE(RunOp(&ws, R"(type: "PRelu" input: "X" input: "S" output: "X")"));
  EXPECT_EQ(Fetch<float>(ws, "X"),
            (std::vector<float>{-0.5f, -0.25f, 0, 1, 2, -1, 3, -0.125f, 0.25f, 7}));
}

TEST(PReluOpTest, BadSlopesAreNamed) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3, 2}, std::vector<float>(12));
  Feed<float>(&ws, "S2", {2}, {1, 1});
  Feed<float>(&ws, "S23", {2, 3}, std::vector<float>(6));
  Feed<int32_t>(&ws, "I", {3}, {1, 1, 1});
  const auto expect = [&ws](const std::string& op, const std::string& part) {
    const std::string infer = InferError(ws, op);
    EXPECT_NE(infer.find(part), std::string::npos) << infer;
    EXPECT_NE(RunOpError(&ws, op).find(part), std::string::npos) << op;
  };
  expect(R"(type: "PRelu" input: "X" input: "S2" output: "Y")",
         "Slope 'S2' float32[2] must have 1 or C=3 values (dim 1 of X 'X' float32[2,3,2]");
  // With NHWC the channels are the last dim, 2: S2 fits.
  EXPECT_TRUE(RunOp(&ws, R"(type: "PRelu" input: "X" input: "S2" output: "Y"
      arg { name: "order" s: "NHWC" })"));
  expect(R"(type: "PRelu" input: "X" input: "S23" output: "Y")", "must hold one value, or one per");
  expect(R"(type: "PRelu" input: "X" input: "I" output: "Y")", "must be float32");
  expect(R"(type: "PRelu" input: "X" input: "S2" output: "Y" arg { name: "order" s: "CHW" })",
         "order 'CHW' must be NCHW or NHWC");
}

TEST(PReluOpTest, GradientsMatchFiniteDifferences) {
  for (const char* order : {"NCHW", "NHWC"}) {
    SCOPED_TRACE(order);
    Workspace ws;
    Feed<float>(&ws, "X", {2, 3, 2, 3}, AwayFromZero(36, 5));
    Feed<float>(&ws, "S", {3}, {0.1f, -0.5f, 2.f});
    EXPECT_TRUE(CheckGradient(ParseOp(std::string(R"(type: "PRelu" input: "X" input: "S"
        output: "Y" arg { name: "order" s: ")") +
                                      order + "\" }"),
                              &ws));
  }
  Workspace ws;
  Feed<float>(&ws, "X", {3, 4}, AwayFromZero(12, 6));
  Feed<float>(&ws, "S", {1}, {0.3f});
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "PRelu" input: "X" input: "S" output: "Y")"), &ws));
}

TEST(PReluOpTest, GradientOfAnInPlacePReluIsRefused) {
  NetDef net = NetOf({R"(type: "PRelu" input: "X" input: "S" output: "X")"});
  try {
    AddGradientOperators(&net, {"X"});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("computed in place has no gradient"), std::string::npos)
        << e.status().message();
  }
}

}  // namespace
}  // namespace braid::test
