// ConvTranspose and ConvTransposeGradient: results against a naive scatter loop (stride, pads,
// adj, groups, rectangular kernels, no bias), shape inference against the kernel, errors,
// numerical gradients of X, filter and bias.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;

struct DeconvCase {
  int64_t n = 2, c = 4, h = 3, w = 4, m = 6, kh = 3, kw = 3, group = 1;
  int64_t stride_h = 1, stride_w = 1, pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
  int64_t adj_h = 0, adj_w = 0;
  bool bias = true;

  int64_t OutH() const { return (h - 1) * stride_h + kh + adj_h - pad_t - pad_b; }
  int64_t OutW() const { return (w - 1) * stride_w + kw + adj_w - pad_l - pad_r; }
  std::vector<int64_t> XDims() const { return {n, c, h, w}; }
  std::vector<int64_t> WDims() const { return {c, m / group, kh, kw}; }
  std::vector<int64_t> YDims() const { return {n, m, OutH(), OutW()}; }
  std::string Op() const {
    std::string op = R"(type: "ConvTranspose" input: "X" input: "W")";
    if (bias) op += R"( input: "b")";
    op += R"( output: "Y")";
    auto add = [&op](const char* name, int64_t v) {
      op += std::string(" arg { name: \"") + name + "\" i: " + std::to_string(v) + " }";
    };
    add("kernel_h", kh), add("kernel_w", kw);
    op += " arg { name: \"strides\" ints: " + std::to_string(stride_h) +
          " ints: " + std::to_string(stride_w) + " }";
    op += " arg { name: \"pads\" ints: " + std::to_string(pad_t) +
          " ints: " + std::to_string(pad_l) + " ints: " + std::to_string(pad_b) +
          " ints: " + std::to_string(pad_r) + " }";
    add("adj_h", adj_h), add("adj_w", adj_w);
    if (group != 1) add("group", group);
    return op;
  }
};

std::vector<float> Random(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> v(count);
  for (float& x : v) x = uniform(rng);
  return v;
}

int64_t Numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Every X element scatters X * W[ci, co, i, j] into Y at (h * stride - pad + i, w * stride - pad +
// j).
std::vector<float> NaiveDeconv(const DeconvCase& k, const std::vector<float>& x,
                               const std::vector<float>& w, const std::vector<float>& b) {
  const int64_t oh = k.OutH(), ow = k.OutW(), cin_g = k.c / k.group, cout_g = k.m / k.group;
  std::vector<double> y(Numel(k.YDims()), 0.0);
  for (int64_t n = 0; n < k.n; ++n) {
    for (int64_t ci = 0; ci < k.c; ++ci) {
      const int64_t g = ci / cin_g;
      for (int64_t ih = 0; ih < k.h; ++ih) {
        for (int64_t iw = 0; iw < k.w; ++iw) {
          const float xv = x[((n * k.c + ci) * k.h + ih) * k.w + iw];
          for (int64_t co = 0; co < cout_g; ++co) {
            for (int64_t i = 0; i < k.kh; ++i) {
              for (int64_t j = 0; j < k.kw; ++j) {
                const int64_t yh = ih * k.stride_h - k.pad_t + i;
                const int64_t yw = iw * k.stride_w - k.pad_l + j;
                if (yh < 0 || yh >= oh || yw < 0 || yw >= ow) continue;
                const float wv = w[((ci * cout_g + co) * k.kh + i) * k.kw + j];
                y[((n * k.m + g * cout_g + co) * oh + yh) * ow + yw] += xv * wv;
              }
            }
          }
        }
      }
    }
  }
  std::vector<float> out(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    const int64_t channel = static_cast<int64_t>(i) / (oh * ow) % k.m;
    out[i] = static_cast<float>(y[i]) + (k.bias ? b[channel] : 0.f);
  }
  return out;
}

void FeedCase(Workspace* ws, const DeconvCase& k, unsigned seed) {
  Feed<float>(ws, "X", k.XDims(), Random(Numel(k.XDims()), seed));
  Feed<float>(ws, "W", k.WDims(), Random(Numel(k.WDims()), seed + 1));
  if (k.bias) Feed<float>(ws, "b", {k.m}, Random(k.m, seed + 2));
}

void ExpectMatchesNaive(const DeconvCase& k) {
  SCOPED_TRACE(k.Op());
  Workspace ws;
  FeedCase(&ws, k, 7);
  ASSERT_TRUE(RunOp(&ws, k.Op()));
  EXPECT_EQ(ShapeOf(ws, "Y"), k.YDims());
  const std::vector<float> expected =
      NaiveDeconv(k, Fetch<float>(ws, "X"), Fetch<float>(ws, "W"),
                  k.bias ? Fetch<float>(ws, "b") : std::vector<float>{});
  const std::vector<float> y = Fetch<float>(ws, "Y");
  ASSERT_EQ(y.size(), expected.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-4f) << "at " << i;
}

TEST(ConvTransposeOpTest, UnitStrideMatchesNaiveLoop) { ExpectMatchesNaive(DeconvCase{}); }

TEST(ConvTransposeOpTest, StridePadAndAdjMatchNaiveLoop) {
  DeconvCase k;
  k.kh = k.kw = 4, k.stride_h = k.stride_w = 2, k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  ExpectMatchesNaive(k);  // the DCGAN / FCN upsampling layer: doubles H and W
  k.adj_h = 1;
  k.stride_w = 3, k.adj_w = 2;
  ExpectMatchesNaive(k);
}

TEST(ConvTransposeOpTest, AsymmetricPadsAndRectangularKernelMatchNaiveLoop) {
  DeconvCase k;
  k.kh = 2, k.kw = 5, k.stride_h = 3, k.stride_w = 2, k.pad_t = 2, k.pad_l = 0, k.pad_b = 0,
  k.pad_r = 3;
  ExpectMatchesNaive(k);
}

TEST(ConvTransposeOpTest, GroupsMatchNaiveLoop) {
  DeconvCase k;
  k.group = 2, k.stride_h = k.stride_w = 2, k.pad_t = k.pad_r = 1, k.adj_w = 1;
  ExpectMatchesNaive(k);
  k.c = k.m = k.group = 4;  // depthwise
  k.bias = false;
  ExpectMatchesNaive(k);
}

TEST(ConvTransposeOpTest, WithoutBiasAndWithKernelArgumentMatchesNaiveLoop) {
  DeconvCase k;
  k.bias = false, k.kh = k.kw = 2, k.stride_h = k.stride_w = 2;
  ExpectMatchesNaive(k);
  Workspace ws;
  FeedCase(&ws, k, 3);
  ASSERT_TRUE(RunOp(&ws, k.Op()));
  const std::vector<float> y = Fetch<float>(ws, "Y");
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConvTranspose" input: "X" input: "W" output: "Y"
      arg { name: "kernel" i: 2 } arg { name: "stride" i: 2 })"));
  EXPECT_EQ(Fetch<float>(ws, "Y"), y);
}

std::string DeconvError(const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                        const std::vector<int64_t>& b, const std::string& args) {
  Workspace ws;
  Feed<float>(&ws, "X", x, std::vector<float>(Numel(x)));
  Feed<float>(&ws, "W", w, std::vector<float>(Numel(w)));
  std::string op = R"(type: "ConvTranspose" input: "X" input: "W")";
  if (!b.empty()) {
    Feed<float>(&ws, "b", b, std::vector<float>(Numel(b)));
    op += R"( input: "b")";
  }
  op += R"( output: "Y" )" + args;
  const std::string infer = InferError(ws, op);
  EXPECT_NE(RunOpError(&ws, op).find(infer), std::string::npos) << infer;
  return infer;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(ConvTransposeOpTest, BadShapesAndArgumentsAreNamed) {
  const std::vector<int64_t> x{1, 4, 3, 3};
  EXPECT_TRUE(Contains(DeconvError(x, {3, 2, 3, 3}, {}, ""), "filter 'W' float32[3,2,3,3]"));
  EXPECT_TRUE(Contains(DeconvError(x, {4, 2, 3, 3}, {}, R"(arg { name: "group" i: 3 })"),
                       "group 3 must divide"));
  EXPECT_TRUE(
      Contains(DeconvError(x, {4, 2, 3, 3}, {3}, ""), "bias 'b' float32[3] must be float32[2]"));
  // M is the filter's dim 1 times group: 4 here.
  EXPECT_TRUE(Contains(DeconvError(x, {4, 2, 3, 3}, {2}, R"(arg { name: "group" i: 2 })"),
                       "bias 'b' float32[2] must be float32[4]"));
  EXPECT_EQ(DeconvError(x, {4, 2, 3, 3}, {4}, R"(arg { name: "group" i: 2 })"), "");
  EXPECT_TRUE(Contains(DeconvError(x, {4, 2, 3, 3}, {}, R"(arg { name: "adj" i: 1 })"),
                       "adj (1, 1) must be >= 0 and below the stride (1, 1)"));
  EXPECT_TRUE(Contains(DeconvError(x, {4, 2, 3, 3}, {}, R"(arg { name: "dilation" i: 2 })"),
                       "no dilation"));
  EXPECT_TRUE(Contains(DeconvError(x, {4, 2, 3, 3}, {}, R"(arg { name: "kernel" i: 2 })"),
                       "differs from the filter's"));
  EXPECT_TRUE(Contains(DeconvError(x, {4, 2, 3, 3}, {}, R"(arg { name: "legacy_pad" i: 2 })"),
                       "legacy_pad 2 is not supported"));
  EXPECT_TRUE(
      Contains(DeconvError(x, {4, 2, 3, 3}, {}, R"(arg { name: "order" s: "NHWC" })"), "NHWC"));
  EXPECT_TRUE(Contains(DeconvError({1, 4, 1, 1}, {4, 2, 1, 1}, {}, R"(arg { name: "pad" i: 1 })"),
                       "gives an empty output"));
  EXPECT_TRUE(Contains(DeconvError({1, 4, 3}, {4, 2, 3, 3}, {}, ""), "4-D"));
}

TEST(ConvTransposeOpTest, GradientsMatchFiniteDifferences) {
  DeconvCase k;
  k.n = 2, k.c = 4, k.h = 3, k.w = 2, k.m = 4, k.group = 2, k.stride_h = 2, k.pad_t = 1,
  k.pad_r = 1, k.adj_h = 1;
  for (bool bias : {true, false}) {
    k.bias = bias;
    SCOPED_TRACE(k.Op());
    Workspace ws;
    FeedCase(&ws, k, 11);
    EXPECT_TRUE(CheckGradient(ParseOp(k.Op()), &ws));
  }
  DeconvCase plain;
  plain.n = 1, plain.c = 2, plain.m = 3, plain.kh = 2, plain.kw = 3, plain.stride_w = 2;
  Workspace ws;
  FeedCase(&ws, plain, 13);
  EXPECT_TRUE(CheckGradient(ParseOp(plain.Op()), &ws));
}

TEST(ConvTransposeOpTest, GradientOpWithoutDxAndBadOutputCountsAreChecked) {
  DeconvCase k;
  k.bias = false;
  Workspace ws;
  FeedCase(&ws, k, 5);
  ASSERT_TRUE(RunOp(&ws, k.Op()));
  Feed<float>(&ws, "dY", k.YDims(), Random(Numel(k.YDims()), 9));
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConvTransposeGradient" input: "X" input: "W" input: "dY"
      output: "dW" output: "db" arg { name: "kernel" i: 3 })"));
  EXPECT_EQ(ShapeOf(ws, "db"), (std::vector<int64_t>{k.m}));
  const std::vector<float> dy = Fetch<float>(ws, "dY");
  const int64_t plane = k.OutH() * k.OutW();
  for (int64_t c = 0; c < k.m; ++c) {
    double sum = 0;
    for (int64_t n = 0; n < k.n; ++n) {
      for (int64_t i = 0; i < plane; ++i) sum += dy[(n * k.m + c) * plane + i];
    }
    EXPECT_NEAR(Fetch<float>(ws, "db")[c], sum, 1e-4);
  }
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "ConvTransposeGradient" input: "X" input: "W"
      input: "dY" output: "dW" output: "db" output: "dX" arg { name: "no_bias" i: 1 })"),
                       "names 3 outputs"));
  Feed<float>(&ws, "dY", {1, 1, 1, 1}, {0.f});
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "ConvTransposeGradient" input: "X" input: "W"
      input: "dY" output: "dW" output: "db")"),
                       "dY 'dY' float32[1,1,1,1] must be float32[2,6,5,6]"));
}

}  // namespace
}  // namespace braid::test
