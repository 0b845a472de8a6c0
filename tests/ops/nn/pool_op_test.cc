// MaxPool, AveragePool and their gradients: results against naive loops (stride, pads,
// count_include_pad, global pooling, legacy_pad modes), shape inference against the kernel,
// errors, numerical gradients.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;
using ::braid::testing::GradientCheckOptions;

struct PoolCase {
  std::string type = "MaxPool";
  int64_t n = 2, c = 3, h = 7, w = 6, kh = 3, kw = 2;
  int64_t stride_h = 1, stride_w = 1, pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
  bool count_include_pad = false;
  // legacy_pad 1 (VALID) and 2 (SAME) give no pad arguments; 3 (CAFFE_LEGACY_POOLING) gives
  // pad_t and pad_l at both ends. pad_b and pad_r then hold the end pads the mode works out
  // (computed by hand), which the naive loop and the output size use.
  int legacy_pad = 0;

  int64_t OutH() const { return (h + pad_t + pad_b - kh) / stride_h + 1; }
  int64_t OutW() const { return (w + pad_l + pad_r - kw) / stride_w + 1; }
  std::vector<int64_t> XDims() const { return {n, c, h, w}; }
  std::vector<int64_t> YDims() const { return {n, c, OutH(), OutW()}; }
  std::string Args() const {
    std::string a;
    auto add = [&a](const char* name, int64_t v) {
      a += std::string(" arg { name: \"") + name + "\" i: " + std::to_string(v) + " }";
    };
    add("kernel_h", kh), add("kernel_w", kw), add("stride_h", stride_h), add("stride_w", stride_w);
    if (legacy_pad == 0) {
      add("pad_t", pad_t), add("pad_l", pad_l), add("pad_b", pad_b), add("pad_r", pad_r);
    } else {
      add("legacy_pad", legacy_pad);
      if (legacy_pad == 3) add("pad_t", pad_t), add("pad_l", pad_l), add("pad_b", pad_t);
      if (legacy_pad == 3) add("pad_r", pad_l);
    }
    if (type == "AveragePool") add("count_include_pad", count_include_pad);
    return a;
  }
  std::string Op() const { return "type: \"" + type + R"(" input: "X" output: "Y")" + Args(); }
};

// Distinct values a multiple of 0.01 apart, shuffled: no ties, and far from ties for the
// finite differences of max pooling.
std::vector<float> DistinctValues(int64_t count, unsigned seed) {
  std::vector<float> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = 0.01f * static_cast<float>(i - count / 2);
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  return v;
}

std::vector<float> NaivePool(const PoolCase& k, const std::vector<float>& x) {
  std::vector<float> y(k.n * k.c * k.OutH() * k.OutW());
  size_t out = 0;
  for (int64_t nc = 0; nc < k.n * k.c; ++nc) {
    for (int64_t oh = 0; oh < k.OutH(); ++oh) {
      for (int64_t ow = 0; ow < k.OutW(); ++ow) {
        const int64_t h0 = oh * k.stride_h - k.pad_t, w0 = ow * k.stride_w - k.pad_l;
        double max = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t inside = 0;
        for (int64_t ih = std::max<int64_t>(h0, 0); ih < std::min(h0 + k.kh, k.h); ++ih) {
          for (int64_t iw = std::max<int64_t>(w0, 0); iw < std::min(w0 + k.kw, k.w); ++iw) {
            const float v = x[(nc * k.h + ih) * k.w + iw];
            max = std::max<double>(max, v);
            sum += v;
            ++inside;
          }
        }
        const int64_t count = k.count_include_pad ? k.kh * k.kw : inside;
        y[out++] = static_cast<float>(k.type == "MaxPool" ? max : sum / count);
      }
    }
  }
  return y;
}

void ExpectMatchesNaive(const PoolCase& k) {
  const unsigned seed = 300u + static_cast<unsigned>(k.kh * 10 + k.stride_h);
  SCOPED_TRACE("seed " + std::to_string(seed) + ", op: " + k.Op());
  Workspace ws;
  const std::vector<float> x = DistinctValues(k.n * k.c * k.h * k.w, seed);
  Feed<float>(&ws, "X", k.XDims(), x);
  ASSERT_TRUE(RunOp(&ws, k.Op()));
  ASSERT_EQ(ShapeOf(ws, "Y"), k.YDims());
  const std::vector<float> expected = NaivePool(k, x), actual = Fetch<float>(ws, "Y");
  for (size_t i = 0; i < actual.size(); ++i) ASSERT_NEAR(actual[i], expected[i], 1e-5f) << i;
}

TEST(PoolOpTest, MaxPoolMatchesNaiveLoop) {
  PoolCase k;
  ExpectMatchesNaive(k);
  k.kh = k.kw = 2, k.stride_h = k.stride_w = 2;
  ExpectMatchesNaive(k);
  k.kh = k.kw = 3, k.pad_t = 1, k.pad_l = 2, k.pad_b = 0, k.pad_r = 1, k.stride_w = 3;
  ExpectMatchesNaive(k);
}

TEST(PoolOpTest, AveragePoolMatchesNaiveLoopExcludingPadding) {
  PoolCase k;
  k.type = "AveragePool", k.kh = k.kw = 3, k.stride_h = k.stride_w = 2;
  k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  ExpectMatchesNaive(k);
}

TEST(PoolOpTest, AveragePoolMatchesNaiveLoopIncludingPadding) {
  PoolCase k;
  k.type = "AveragePool", k.count_include_pad = true, k.kh = k.kw = 3;
  k.pad_t = 2, k.pad_l = 1, k.pad_b = 1, k.pad_r = 2, k.stride_h = 2;
  ExpectMatchesNaive(k);
}

// A corner window of a 3x3 kernel with pad 1 holds 4 image elements of 9.
TEST(PoolOpTest, CountIncludePadChangesOnlyTheDivisorAtTheBorder) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 1, 2, 2}, {1, 2, 3, 4});
  const std::string op = R"(type: "AveragePool" input: "X" output: "Y"
                            arg { name: "kernel" i: 3 } arg { name: "pad" i: 1 })";
  ASSERT_TRUE(RunOp(&ws, op));
  EXPECT_EQ(Fetch<float>(ws, "Y"), std::vector<float>(4, 2.5f));
  ASSERT_TRUE(RunOp(&ws, op + R"( arg { name: "count_include_pad" i: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "Y"), std::vector<float>(4, 10.f / 9.f));
}

TEST(PoolOpTest, GlobalPoolingReducesEachPlane) {
  Workspace ws;
  const std::vector<float> x = DistinctValues(2 * 3 * 5 * 4, 9);
  Feed<float>(&ws, "X", {2, 3, 5, 4}, x);
  ASSERT_TRUE(RunOp(&ws, R"(type: "MaxPool" input: "X" output: "Ymax"
                            arg { name: "global_pooling" i: 1 })"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "AveragePool" input: "X" output: "Yavg"
                            arg { name: "global_pooling" i: 1 })"));
  EXPECT_EQ(ShapeOf(ws, "Ymax"), (std::vector<int64_t>{2, 3, 1, 1}));
  const std::vector<float> ymax = Fetch<float>(ws, "Ymax"), yavg = Fetch<float>(ws, "Yavg");
  for (int p = 0; p < 6; ++p) {
    auto begin = x.begin() + p * 20;
    EXPECT_EQ(ymax[p], *std::max_element(begin, begin + 20));
    EXPECT_NEAR(yavg[p], std::accumulate(begin, begin + 20, 0.0) / 20, 1e-6);
  }
}

// SAME on 7x6, kernel 3, stride 2: height 4 (pads 1, 1), width 3 (pads 0, 1).
PoolCase SamePool(const std::string& type) {
  PoolCase k;
  k.type = type, k.legacy_pad = 2, k.kh = k.kw = 3, k.stride_h = k.stride_w = 2;
  k.pad_t = 1, k.pad_b = 1, k.pad_l = 0, k.pad_r = 1;
  return k;
}

// CAFFE_LEGACY_POOLING on 6x7, kernel 3, stride 2, pad 1: ceil((6 + 2 - 3) / 2) + 1 = 4 rows
// (bottom pad 2: the row Caffe's rounding up adds), ceil((7 + 2 - 3) / 2) + 1 = 4 columns (right
// pad 1).
PoolCase CaffeLegacyPool(const std::string& type) {
  PoolCase k;
  k.type = type, k.legacy_pad = 3, k.h = 6, k.w = 7, k.kh = k.kw = 3, k.stride_h = k.stride_w = 2;
  k.pad_t = k.pad_l = 1, k.pad_b = 2, k.pad_r = 1;
  return k;
}

TEST(PoolOpTest, LegacyPadModesMatchNaiveLoopOverTheirPads) {
  for (const char* type : {"MaxPool", "AveragePool"}) {
    SCOPED_TRACE(type);
    ExpectMatchesNaive(SamePool(type));
    ExpectMatchesNaive(CaffeLegacyPool(type));
    PoolCase valid;
    valid.type = type, valid.legacy_pad = 1, valid.kh = valid.kw = 3, valid.stride_h = 2;
    ExpectMatchesNaive(valid);
  }
}

// Caffe2's divisor: the window's elements inside the image, or with count_include_pad the whole
// kernel, also for the windows Caffe's rounding up adds past the image.
TEST(PoolOpTest, CaffeLegacyAveragePoolDividesAsCaffe2) {
  PoolCase k = CaffeLegacyPool("AveragePool");
  ExpectMatchesNaive(k);
  k.count_include_pad = true;
  ExpectMatchesNaive(k);
  // By hand: 1x1x2x2 image, kernel 2, stride 2, pad 1: 2x2 windows, each holding one element.
  Workspace ws;
  Feed<float>(&ws, "X", {1, 1, 2, 2}, {1, 2, 3, 4});
  const std::string op = R"(type: "AveragePool" input: "X" output: "Y" arg { name: "kernel" i: 2 }
      arg { name: "stride" i: 2 } arg { name: "pad" i: 1 } arg { name: "legacy_pad" i: 3 })";
  ASSERT_TRUE(RunOp(&ws, op));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{1, 2, 3, 4}));
  ASSERT_TRUE(RunOp(&ws, op + R"( arg { name: "count_include_pad" i: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{0.25f, 0.5f, 0.75f, 1}));
}

// GoogLeNet's pool1 shape: 112 -> 56 (rounding down would give 55).
TEST(PoolOpTest, CaffeLegacyMaxPoolKeepsTheLastRowAndColumn) {
  PoolCase k;
  k.n = 1, k.c = 2, k.h = k.w = 112, k.kh = k.kw = 3, k.stride_h = k.stride_w = 2;
  k.legacy_pad = 3, k.pad_b = k.pad_r = 1;
  ASSERT_EQ(k.OutH(), 56);
  ExpectMatchesNaive(k);
}

// DenseNet's exported global pooling.
TEST(PoolOpTest, GlobalPoolingWithKernelZeroStrideOnePadZero) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 9, 0, 0, 0, 0});
  ASSERT_TRUE(RunOp(&ws, R"(type: "AveragePool" input: "X" output: "Y"
      arg { name: "global_pooling" i: 1 } arg { name: "kernel" i: 0 } arg { name: "stride" i: 1 }
      arg { name: "pad" i: 0 } arg { name: "order" s: "NCHW" })"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{1, 2, 1, 1}));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{5, 1}));
}

void ExpectError(const std::string& op, const std::string& fragment) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 2, 4, 4}, std::vector<float>(32, 0.f));
  const std::string infer = InferError(ws, op);
  EXPECT_NE(infer.find(fragment), std::string::npos) << infer;
  const std::string run = RunOpError(&ws, op);
  EXPECT_NE(run.find(infer), std::string::npos) << run;
}

TEST(PoolOpTest, RejectsBadWindows) {
  ExpectError(R"(type: "MaxPool" input: "X" output: "Y")",
              "set the window size: 'kernel', 'kernel_h'/'kernel_w' or 'kernels'");
  ExpectError(R"(type: "MaxPool" input: "X" output: "Y" arg { name: "kernel" i: 2 }
                 arg { name: "pad" i: 2 })",
              "must be smaller than the kernel (2, 2)");
  ExpectError(R"(type: "MaxPool" input: "X" output: "Y" arg { name: "kernel" i: 5 })",
              "the window (5, 5) (dilation (1, 1)) does not fit X 'X' float32[1,2,4,4]");
  ExpectError(R"(type: "AveragePool" input: "X" output: "Y" arg { name: "kernel" i: 2 }
                 arg { name: "dilation" i: 2 })",
              "pooling takes no dilation");
  ExpectError(R"(type: "AveragePool" input: "X" output: "Y" arg { name: "kernel" i: 2 }
                 arg { name: "strides" ints: [1, 0] })",
              "stride (1, 0) must be >= 1");
  ExpectError(R"(type: "MaxPool" input: "X" output: "Y" arg { name: "global_pooling" i: 1 }
                 arg { name: "stride" i: 2 })",
              "global_pooling takes no stride, pad or dilation arguments (or stride 1, pad 0, "
              "dilation 1)");
  ExpectError(R"(type: "MaxPool" input: "X" output: "Y" arg { name: "kernel" i: 2 }
                 arg { name: "order" s: "NHWC" })",
              "order 'NHWC' of 'Y' is not supported");
}

// ---- gradients ----

::testing::AssertionResult CheckPoolGradient(const PoolCase& k, unsigned seed) {
  Workspace ws;
  Feed<float>(&ws, "X", k.XDims(), DistinctValues(k.n * k.c * k.h * k.w, seed));
  GradientCheckOptions options;
  options.seed = seed;
  return CheckGradient(ParseOp(k.Op()), &ws, options);
}

TEST(PoolGradientTest, MaxPoolMatchesNumericalGradient) {
  PoolCase k;
  k.kh = k.kw = 3, k.stride_h = k.stride_w = 2, k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  EXPECT_TRUE(CheckPoolGradient(k, 41));
  k.kh = 2, k.kw = 3, k.stride_h = 1, k.stride_w = 2, k.pad_t = 0, k.pad_r = 2;
  EXPECT_TRUE(CheckPoolGradient(k, 42));
}

TEST(PoolGradientTest, AveragePoolMatchesNumericalGradient) {
  PoolCase k;
  k.type = "AveragePool", k.kh = k.kw = 3, k.stride_h = 2;
  k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  EXPECT_TRUE(CheckPoolGradient(k, 43));
  k.count_include_pad = true;
  EXPECT_TRUE(CheckPoolGradient(k, 44));
}

TEST(PoolGradientTest, LegacyPadModesMatchNumericalGradient) {
  unsigned seed = 46;
  for (const char* type : {"MaxPool", "AveragePool"}) {
    SCOPED_TRACE(type);
    for (PoolCase k : {SamePool(type), CaffeLegacyPool(type)}) {
      k.n = 1, k.c = 2;
      EXPECT_TRUE(CheckPoolGradient(k, seed++));
      if (k.type == "AveragePool") {
        k.count_include_pad = true;
        EXPECT_TRUE(CheckPoolGradient(k, seed++));
      }
    }
  }
}

TEST(PoolGradientTest, GlobalPoolingMatchesNumericalGradient) {
  for (const char* type : {"MaxPool", "AveragePool"}) {
    SCOPED_TRACE(type);
    Workspace ws;
    Feed<float>(&ws, "X", {2, 3, 4, 5}, DistinctValues(120, 45));
    EXPECT_TRUE(CheckGradient(ParseOp(std::string("type: \"") + type + R"(" input: "X"
                                      output: "Y" arg { name: "global_pooling" i: 1 })"),
                              &ws));
  }
}

// dX routes each dY to its window's maximum; overlapping windows add up.
TEST(PoolGradientTest, MaxPoolGradientRoutesDyToTheMaximum) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 1, 3, 3}, {1, 2, 3, 4, 9, 5, 6, 7, 8});
  Feed<float>(&ws, "Y", {1, 1, 2, 2}, {9, 9, 9, 9});
  Feed<float>(&ws, "dY", {1, 1, 2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(RunOp(&ws, R"(type: "MaxPoolGradient" input: "X" input: "Y" input: "dY"
                            output: "dX" arg { name: "kernel" i: 2 })"));
  EXPECT_EQ(Fetch<float>(ws, "dX"), (std::vector<float>{0, 0, 0, 0, 10, 0, 0, 0, 0}));
}

TEST(PoolGradientTest, RunsOnAnEmptyBatch) {
  for (const char* type : {"MaxPool", "AveragePool"}) {
    Workspace ws;
    Feed<float>(&ws, "X", {0, 2, 4, 4}, {});
    const std::string args = R"( arg { name: "kernel" i: 2 } arg { name: "stride" i: 2 })";
    ASSERT_TRUE(RunOp(&ws, std::string("type: \"") + type + R"(" input: "X" output: "Y")" + args));
    EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{0, 2, 2, 2}));
    ASSERT_TRUE(RunOp(&ws, std::string("type: \"") + type +
                               R"(Gradient" input: "X" input: "Y" input: "Y" output: "dX")" +
                               args));
    EXPECT_EQ(ShapeOf(ws, "dX"), (std::vector<int64_t>{0, 2, 4, 4}));
  }
}

TEST(PoolGradientTest, RejectsYOfTheWrongShape) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 1, 3, 3}, std::vector<float>(9, 0.f));
  Feed<float>(&ws, "Y", {1, 1, 3, 3}, std::vector<float>(9, 0.f));
  Feed<float>(&ws, "dY", {1, 1, 2, 2}, std::vector<float>(4, 0.f));
  const std::string op = R"(type: "AveragePoolGradient" input: "X" input: "Y" input: "dY"
                            output: "dX" arg { name: "kernel" i: 2 })";
  const std::string error = InferError(ws, op);
  EXPECT_NE(error.find("Y 'Y' float32[1,1,3,3] must be float32[1,1,2,2], the pooled shape of X "
                       "'X' float32[1,1,3,3]"),
            std::string::npos)
      << error;
  EXPECT_NE(RunOpError(&ws, op).find(error), std::string::npos);
}

}  // namespace
}  // namespace braid::test
