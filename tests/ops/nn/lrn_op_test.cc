// LRN and LRNGradient: results against the defining sum (window sizes below and above the channel
// count, alpha / beta / bias), the optional scale output, a hand-computed case, errors, numerical
// gradients with and without the scale input to the gradient.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;
using ::braid::testing::GradientCheckOptions;

struct LrnCase {
  int64_t n = 2, c = 5, h = 2, w = 3, size = 3;
  float alpha = 0.5f, beta = 0.75f, bias = 2.f;

  std::vector<int64_t> Dims() const { return {n, c, h, w}; }
  int64_t Numel() const { return n * c * h * w; }
  std::string Op(bool with_scale) const {
    return std::string(R"(type: "LRN" input: "X" output: "Y")") +
           (with_scale ? R"( output: "scale")" : "") +
           " arg { name: \"size\" i: " + std::to_string(size) +
           " } arg { name: \"alpha\" f: " + std::to_string(alpha) +
           " } arg { name: \"beta\" f: " + std::to_string(beta) +
           " } arg { name: \"bias\" f: " + std::to_string(bias) + " }";
  }
};

std::vector<float> Random(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.5f, 1.5f);
  std::vector<float> v(count);
  for (float& x : v) x = uniform(rng);
  return v;
}

// scale = bias + alpha / size * sum of x^2 over channels [c - (size-1)/2, c + (size-1)/2].
std::vector<float> NaiveScale(const LrnCase& k, const std::vector<float>& x) {
  const int64_t hw = k.h * k.w, half = (k.size - 1) / 2;
  std::vector<float> scale(x.size());
  for (int64_t n = 0; n < k.n; ++n) {
    for (int64_t c = 0; c < k.c; ++c) {
      for (int64_t i = 0; i < hw; ++i) {
        double sum = 0;
        for (int64_t d = c - half; d <= c + half; ++d) {
          if (d < 0 || d >= k.c) continue;
          const double v = x[(n * k.c + d) * hw + i];
          sum += v * v;
        }
        scale[(n * k.c + c) * hw + i] = static_cast<float>(k.bias + k.alpha / k.size * sum);
      }
    }
  }
  return scale;
}

void ExpectMatchesNaive(const LrnCase& k) {
  SCOPED_TRACE(k.Op(true));
  Workspace ws;
  Feed<float>(&ws, "X", k.Dims(), Random(k.Numel(), 3));
  ASSERT_TRUE(RunOp(&ws, k.Op(true)));
  const std::vector<float> x = Fetch<float>(ws, "X");
  const std::vector<float> scale = NaiveScale(k, x);
  const std::vector<float> y = Fetch<float>(ws, "Y");
  const std::vector<float> got_scale = Fetch<float>(ws, "scale");
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(got_scale[i], scale[i], 1e-5f * scale[i]) << "at " << i;
    EXPECT_NEAR(y[i], x[i] * std::pow(scale[i], -k.beta), 1e-5f) << "at " << i;
  }
  ASSERT_TRUE(RunOp(&ws, k.Op(false)));  // without the scale output: the same Y
  EXPECT_EQ(Fetch<float>(ws, "Y"), y);
}

TEST(LrnOpTest, MatchesTheDefiningSum) {
  ExpectMatchesNaive(LrnCase{});
  LrnCase k;
  k.size = 5, k.alpha = 1e-4f, k.beta = 0.75f, k.bias = 1.f;  // AlexNet's
  ExpectMatchesNaive(k);
  k.size = 7, k.c = 3;  // a window wider than the channels
  ExpectMatchesNaive(k);
  k.size = 1, k.alpha = 2.f, k.beta = 0.5f;
  ExpectMatchesNaive(k);
}

TEST(LrnOpTest, HandComputedCase) {
  // X [1, 3, 1, 1] = (1, 2, 3), size 3, alpha 3, beta 1, bias 1:
  // scale = 1 + (1 + 4) = 6, 1 + (1 + 4 + 9) = 15, 1 + (4 + 9) = 14; Y = X / scale.
  Workspace ws;
  Feed<float>(&ws, "X", {1, 3, 1, 1}, {1, 2, 3});
  ASSERT_TRUE(RunOp(&ws, R"(type: "LRN" input: "X" output: "Y" output: "S"
      arg { name: "size" i: 3 } arg { name: "alpha" f: 3 } arg { name: "beta" f: 1 })"));
  const std::vector<float> s = Fetch<float>(ws, "S");
  const std::vector<float> y = Fetch<float>(ws, "Y");
  EXPECT_EQ(s, (std::vector<float>{6, 15, 14}));
  EXPECT_FLOAT_EQ(y[0], 1.f / 6);
  EXPECT_FLOAT_EQ(y[1], 2.f / 15);
  EXPECT_FLOAT_EQ(y[2], 3.f / 14);
}

TEST(LrnOpTest, BadArgumentsAndInputsAreNamed) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 3, 2, 2}, std::vector<float>(12));
  Feed<float>(&ws, "X3", {3, 2, 2}, std::vector<float>(12));
  const auto expect = [&ws](const std::string& op, const std::string& part) {
    const std::string infer = InferError(ws, op);
    EXPECT_NE(infer.find(part), std::string::npos) << infer;
    EXPECT_NE(RunOpError(&ws, op).find(part), std::string::npos) << op;
  };
  expect(R"(type: "LRN" input: "X" output: "Y")", "'size' 0 must be an odd number");
  expect(R"(type: "LRN" input: "X" output: "Y" arg { name: "size" i: 4 })", "'size' 4");
  expect(R"(type: "LRN" input: "X" output: "Y" arg { name: "size" i: 3 }
      arg { name: "order" s: "NHWC" })",
         "order 'NHWC' is not supported");
  expect(R"(type: "LRN" input: "X3" output: "Y" arg { name: "size" i: 3 })",
         "X 'X3' float32[3,2,2] must be a float32 4-D tensor");
  Feed<float>(&ws, "dY", {1, 3, 2, 1}, std::vector<float>(6));
  expect(R"(type: "LRNGradient" input: "X" input: "X" input: "dY" output: "dX"
      arg { name: "size" i: 3 })",
         "dY 'dY' float32[1,3,2,1] must have the type and shape of X");
}

TEST(LrnOpTest, GradientMatchesFiniteDifferences) {
  for (const LrnCase& k : {LrnCase{}, LrnCase{1, 4, 2, 2, 5, 1.f, 0.75f, 1.f},
                           LrnCase{2, 3, 1, 2, 1, 0.8f, 1.5f, 0.5f}}) {
    for (bool with_scale : {false, true}) {
      SCOPED_TRACE(k.Op(with_scale));
      Workspace ws;
      Feed<float>(&ws, "X", k.Dims(), Random(k.Numel(), 17));
      GradientCheckOptions options;
      options.outputs = {0};  // scale is a by-product, with no gradient of its own
      EXPECT_TRUE(CheckGradient(ParseOp(k.Op(with_scale)), &ws, options));
    }
  }
}

}  // namespace
}  // namespace braid::test
