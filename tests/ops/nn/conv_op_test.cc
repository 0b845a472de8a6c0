// Conv and ConvGradient: results against a naive loop (stride, pads, dilation, groups, bias),
// Caffe2's argument spellings, shape inference against the kernel, errors, primitive sharing,
// 1-thread vs N-thread runs, numerical gradients, and the time of a ResNet-20 layer.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ops/nn/dnnl_util.h"
#include "ops/op_test_util.h"
#include "runtime/exec/net.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;
using ::braid::testing::GradientCheckOptions;

std::vector<float> RandomValues(std::mt19937* rng, int64_t n) {
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(*rng);
  return v;
}

struct ConvCase {
  int64_t n = 2, c = 3, h = 7, w = 6, m = 4, kh = 3, kw = 3;
  int64_t stride_h = 1, stride_w = 1, pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
  int64_t dilation_h = 1, dilation_w = 1, group = 1;
  bool bias = true;
  // As in pool_op_test.cc: legacy_pad 1 and 2 give no pad arguments, 3 gives pad_t and pad_l at
  // both ends; pad_b and pad_r hold the end pads the mode works out (by hand).
  int legacy_pad = 0;

  int64_t OutH() const { return (h + pad_t + pad_b - (dilation_h * (kh - 1) + 1)) / stride_h + 1; }
  int64_t OutW() const { return (w + pad_l + pad_r - (dilation_w * (kw - 1) + 1)) / stride_w + 1; }
  std::vector<int64_t> XDims() const { return {n, c, h, w}; }
  std::vector<int64_t> FilterDims() const { return {m, c / group, kh, kw}; }
  std::vector<int64_t> YDims() const { return {n, m, OutH(), OutW()}; }
  std::string Inputs() const {
    return std::string(R"(input: "X" input: "W" )") + (bias ? R"(input: "b" )" : "");
  }
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
    add("dilation_h", dilation_h), add("dilation_w", dilation_w), add("group", group);
    return a;
  }
  std::string Op() const { return R"(type: "Conv" )" + Inputs() + R"(output: "Y")" + Args(); }
};

// Y[n, m, oh, ow] = b[m] + sum over the group's channels and the window, in double.
std::vector<float> NaiveConv(const ConvCase& k, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& b) {
  const int64_t cg = k.c / k.group, mg = k.m / k.group, oh_n = k.OutH(), ow_n = k.OutW();
  std::vector<float> y(k.n * k.m * oh_n * ow_n);
  for (int64_t n = 0; n < k.n; ++n) {
    for (int64_t m = 0; m < k.m; ++m) {
      for (int64_t oh = 0; oh < oh_n; ++oh) {
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          double acc = k.bias ? b[m] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci) {
            const int64_t c = m / mg * cg + ci;
            for (int64_t i = 0; i < k.kh; ++i) {
              for (int64_t j = 0; j < k.kw; ++j) {
                const int64_t ih = oh * k.stride_h - k.pad_t + i * k.dilation_h;
                const int64_t iw = ow * k.stride_w - k.pad_l + j * k.dilation_w;
                if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
                acc += static_cast<double>(x[((n * k.c + c) * k.h + ih) * k.w + iw]) *
                       w[((m * cg + ci) * k.kh + i) * k.kw + j];
              }
            }
          }
          y[((n * k.m + m) * oh_n + oh) * ow_n + ow] = static_cast<float>(acc);
        }
      }
    }
  }
  return y;
}

// Feeds random X, W (and b), seeded from `seed`.
void FeedConvInputs(const ConvCase& k, unsigned seed, Workspace* ws) {
  std::mt19937 rng(seed);
  Feed<float>(ws, "X", k.XDims(), RandomValues(&rng, k.n * k.c * k.h * k.w));
  Feed<float>(ws, "W", k.FilterDims(), RandomValues(&rng, k.m * (k.c / k.group) * k.kh * k.kw));
  if (k.bias) Feed<float>(ws, "b", {k.m}, RandomValues(&rng, k.m));
}

void ExpectMatchesNaive(const ConvCase& k) {
  const unsigned seed = 1000u + static_cast<unsigned>(k.c * 131 + k.m * 17 + k.group);
  SCOPED_TRACE("seed " + std::to_string(seed) + ", op: " + k.Op());
  Workspace ws;
  FeedConvInputs(k, seed, &ws);
  ASSERT_TRUE(RunOp(&ws, k.Op()));
  ASSERT_EQ(ShapeOf(ws, "Y"), k.YDims());
  const std::vector<float> expected =
      NaiveConv(k, Fetch<float>(ws, "X"), Fetch<float>(ws, "W"),
                k.bias ? Fetch<float>(ws, "b") : std::vector<float>{});
  const std::vector<float> actual = Fetch<float>(ws, "Y");
  ASSERT_EQ(actual.size(), expected.size());
  const float tol = 1e-5f * std::sqrt(static_cast<float>(k.c * k.kh * k.kw)) + 1e-5f;
  for (size_t i = 0; i < actual.size(); ++i) ASSERT_NEAR(actual[i], expected[i], tol) << i;
}

TEST(ConvOpTest, MatchesNaiveLoopFor3x3WithPad1) {
  ConvCase k;
  k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  ExpectMatchesNaive(k);
}

TEST(ConvOpTest, MatchesNaiveLoopWithStridesAndAsymmetricPads) {
  ConvCase k;
  k.h = 9, k.w = 8, k.stride_h = 2, k.stride_w = 3, k.pad_t = 2, k.pad_l = 0, k.pad_b = 1,
  k.pad_r = 2;
  ExpectMatchesNaive(k);
}

// SAME on 7x6, kernel 3, stride 2: pads (1, 1) for the height, (0, 1) for the width.
// CAFFE_LEGACY_POOLING on 6x8, kernel 3, stride 2, pad 0: ceil(3 / 2) + 1 = 3 rows (bottom pad
// 1), ceil(5 / 2) + 1 = 4 columns (right pad 1). VALID: no pads.
ConvCase LegacyPadConv(int mode) {
  ConvCase k;
  k.legacy_pad = mode, k.stride_h = k.stride_w = 2;
  if (mode == 2) k.pad_t = k.pad_b = 1, k.pad_r = 1;
  if (mode == 3) k.h = 6, k.w = 8, k.pad_b = 1, k.pad_r = 1;
  return k;
}

TEST(ConvOpTest, MatchesNaiveLoopForEveryLegacyPadMode) {
  for (int mode : {1, 2, 3}) {
    SCOPED_TRACE("legacy_pad " + std::to_string(mode));
    ExpectMatchesNaive(LegacyPadConv(mode));
  }
}

TEST(ConvOpTest, MatchesNaiveLoopWithDilation) {
  ConvCase k;
  k.h = 10, k.w = 9, k.dilation_h = 2, k.dilation_w = 3, k.pad_t = k.pad_b = 1;
  ExpectMatchesNaive(k);
}

TEST(ConvOpTest, MatchesNaiveLoopWithGroups) {
  ConvCase k;
  k.c = 6, k.m = 4, k.group = 2, k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  ExpectMatchesNaive(k);
}

TEST(ConvOpTest, MatchesNaiveLoopDepthwise) {
  ConvCase k;
  k.c = 8, k.m = 8, k.group = 8, k.stride_h = k.stride_w = 2, k.pad_t = k.pad_l = 1;
  ExpectMatchesNaive(k);
}

TEST(ConvOpTest, MatchesNaiveLoopWithoutBias) {
  ConvCase k;
  k.bias = false, k.kh = 1, k.kw = 5, k.pad_l = k.pad_r = 2;
  ExpectMatchesNaive(k);
}

TEST(ConvOpTest, MatchesNaiveLoopForWideLayers) {
  ConvCase k;
  k.n = 3, k.c = 32, k.m = 48, k.h = k.w = 12, k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  ExpectMatchesNaive(k);
}

// The same convolution under Caffe2's three argument spellings, and with no kernel argument.
TEST(ConvOpTest, AcceptsEveryCaffe2ArgumentSpelling) {
  ConvCase k;
  k.stride_h = k.stride_w = 2, k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  Workspace ws;
  FeedConvInputs(k, 7, &ws);
  ASSERT_TRUE(RunOp(&ws, k.Op()));
  const std::vector<float> expected = Fetch<float>(ws, "Y");
  const std::string inputs = k.Inputs() + R"(output: "Y" )";
  for (const std::string& args :
       {std::string(R"(arg { name: "kernel" i: 3 } arg { name: "stride" i: 2 }
                       arg { name: "pad" i: 1 } arg { name: "order" s: "NCHW" })"),
        std::string(R"(arg { name: "kernels" ints: [3, 3] } arg { name: "strides" ints: [2, 2] }
                       arg { name: "pads" ints: [1, 1, 1, 1] } arg { name: "dilations" ints: [1, 1] })"),
        std::string(R"(arg { name: "stride" i: 2 } arg { name: "pad" i: 1 })")}) {
    SCOPED_TRACE(args);
    ASSERT_TRUE(RunOp(&ws, R"(type: "Conv" )" + inputs + args));
    EXPECT_EQ(Fetch<float>(ws, "Y"), expected);
  }
}

TEST(ConvOpTest, RunsOnAnEmptyBatch) {
  ConvCase k;
  k.n = 0;
  Workspace ws;
  FeedConvInputs(k, 3, &ws);
  ASSERT_TRUE(RunOp(&ws, k.Op()));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{0, 4, 5, 4}));
}

TEST(ConvOpTest, FollowsANewInputShapeOnTheNextRun) {
  ConvCase k;
  Workspace ws;
  NetDef net = NetOf({k.Op()});
  FeedConvInputs(k, 5, &ws);
  Net* n = ws.CreateNet(net);
  ASSERT_TRUE(n->Run().ok());
  k.h = 11, k.w = 4;
  FeedConvInputs(k, 5, &ws);
  ASSERT_TRUE(n->Run().ok());
  EXPECT_EQ(ShapeOf(ws, "Y"), k.YDims());
  const std::vector<float> expected =
      NaiveConv(k, Fetch<float>(ws, "X"), Fetch<float>(ws, "W"), Fetch<float>(ws, "b"));
  const std::vector<float> actual = Fetch<float>(ws, "Y");
  for (size_t i = 0; i < actual.size(); ++i) ASSERT_NEAR(actual[i], expected[i], 1e-4f) << i;
}

// The kernel's error (prefixed by the net and op) and the schema's are the same message.
void ExpectError(const ConvCase& k, const std::string& op, const std::string& fragment) {
  Workspace ws;
  FeedConvInputs(k, 11, &ws);
  const std::string infer = InferError(ws, op);
  EXPECT_NE(infer.find(fragment), std::string::npos) << infer;
  const std::string run = RunOpError(&ws, op);
  EXPECT_NE(run.find(infer), std::string::npos) << run;
}

TEST(ConvOpTest, RejectsFilterChannelsThatDoNotMatchX) {
  ConvCase k;
  k.c = 4;
  Workspace ws;
  FeedConvInputs(k, 1, &ws);
  Feed<float>(&ws, "W", {4, 3, 3, 3}, std::vector<float>(108, 1.f));
  const std::string error = InferError(ws, k.Op());
  EXPECT_NE(error.find("filter 'W' float32[4,3,3,3] must have C/group=4 input channels"),
            std::string::npos)
      << error;
  EXPECT_NE(RunOpError(&ws, k.Op()).find(error), std::string::npos);
}

TEST(ConvOpTest, RejectsGroupNotDividingChannels) {
  ConvCase k;
  k.c = 6, k.group = 3;  // fed W is [4, 2, 3, 3]: 4 filters do not split into 3 groups
  ExpectError(k, k.Op(), "group 3 must divide the channels C=6 of X 'X' float32[2,6,7,6]");
}

TEST(ConvOpTest, RejectsBadWindowArguments) {
  ConvCase k;
  ExpectError(k, R"(type: "Conv" input: "X" input: "W" output: "Y" arg { name: "stride" i: 0 })",
              "stride (0, 0) must be >= 1");
  ExpectError(k, R"(type: "Conv" input: "X" input: "W" output: "Y" arg { name: "pad" i: -1 })",
              "pad (top, left) (-1, -1) must be >= 0");
  ExpectError(k, R"(type: "Conv" input: "X" input: "W" output: "Y" arg { name: "kernel" i: 5 })",
              "kernel (5, 5) differs from the filter's (3, 3)");
  ExpectError(k,
              R"(type: "Conv" input: "X" input: "W" output: "Y" arg { name: "kernel" i: 3 }
                 arg { name: "kernel_h" i: 3 })",
              "set only one of 'kernel', 'kernel_h'/'kernel_w' and 'kernels'");
  ExpectError(k,
              R"(type: "Conv" input: "X" input: "W" output: "Y" arg { name: "pads" ints: [1, 1] })",
              "argument 'pads' [1,1] must hold 4 values");
  ExpectError(k, R"(type: "Conv" input: "X" input: "W" output: "Y" arg { name: "dilation" i: 4 })",
              "does not fit X 'X' float32[2,3,7,6]");
}

TEST(ConvOpTest, RejectsNhwcOrder) {
  ConvCase k;
  ExpectError(k, k.Op() + R"( arg { name: "order" s: "NHWC" })",
              "Conv supports order 'NCHW' only: order 'NHWC' of 'Y' is not supported");
}

TEST(ConvOpTest, RejectsBiasOfTheWrongSize) {
  ConvCase k;
  Workspace ws;
  FeedConvInputs(k, 1, &ws);
  Feed<float>(&ws, "b", {3}, {1, 2, 3});
  EXPECT_NE(InferError(ws, k.Op()).find("bias 'b' float32[3] must be float32[4]"),
            std::string::npos);
  EXPECT_NE(RunOpError(&ws, k.Op()).find("bias 'b' float32[3] must be float32[4]"),
            std::string::npos);
}

TEST(ConvOpTest, RejectsXThatIsNot4D) {
  ConvCase k;
  Workspace ws;
  FeedConvInputs(k, 1, &ws);
  Feed<float>(&ws, "X", {3, 7, 6}, std::vector<float>(126, 0.f));
  EXPECT_NE(InferError(ws, k.Op()).find("X 'X' float32[3,7,6] must be a float32 4-D tensor"),
            std::string::npos);
}

TEST(ConvOpTest, OpsOfOneShapeShareACachedPlan) {
  ConvCase k;
  k.c = 5, k.m = 7, k.h = 13;  // a shape no other test uses
  Workspace ws;
  FeedConvInputs(k, 1, &ws);
  const size_t before = PrimitiveCache::Global().size();
  std::string op2 = k.Op();
  op2.replace(op2.find(R"(output: "Y")"), 12, R"(output: "Y2")");
  ASSERT_TRUE(ws.RunNetOnce(NetOf({k.Op(), op2})).ok());
  EXPECT_EQ(PrimitiveCache::Global().size(), before + 1);
  EXPECT_EQ(Fetch<float>(ws, "Y"), Fetch<float>(ws, "Y2"));
}

// A net's ops share its scratch area (runtime/exec/scratch.h): it is as large as the largest op's
// buffers, not their sum, and a later run grows nothing.
TEST(ConvOpTest, OpsOfANetShareOneScratchAreaSizedByTheLargest) {
  ConvCase k;
  k.n = 2, k.c = 16, k.m = 16, k.h = k.w = 14, k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  ConvCase strided = k;
  strided.stride_h = strided.stride_w = 2;
  std::string small = strided.Op();
  small.replace(small.find(R"(output: "Y")"), 12, R"(output: "Ys")");
  size_t bytes[2];
  for (int with_small : {0, 1}) {
    Workspace ws;
    FeedConvInputs(k, 3, &ws);
    std::vector<std::string> ops{k.Op()};
    if (with_small) ops.insert(ops.begin(), small);
    Net* n = ws.CreateNet(NetOf(ops));
    ASSERT_TRUE(n->Run().ok());
    bytes[with_small] = n->scratch_bytes();
    ASSERT_TRUE(n->Run().ok());
    EXPECT_EQ(n->scratch_bytes(), bytes[with_small]);
  }
  EXPECT_GT(bytes[0], 0u);  // blocked copies of X, W and Y
  EXPECT_EQ(bytes[1], bytes[0]);
}

TEST(ConvOpTest, BatchChunkIsTheLargestDivisorWhoseCopiesFit) {
  const int64_t mb = 1 << 20;
  EXPECT_EQ(BatchChunk(32, 3 * mb), 8);  // 16 x 3 MB > 32 MB
  EXPECT_EQ(BatchChunk(32, 1 * mb), 32);
  EXPECT_EQ(BatchChunk(7, 20 * mb), 1);
  EXPECT_EQ(BatchChunk(12, 5 * mb), 6);
  EXPECT_EQ(BatchChunk(0, mb), 0);
  // Channels padded to the machine's block: 16 on AVX-512, 8 on AVX2 (where 16 halved the chunk).
  const int64_t padded = NativeChannelBlock() == 8 ? 24 : NativeChannelBlock() == 16 ? 32 : 24;
  EXPECT_EQ(BlockedBytesPerSample({8, 24, 10, 10}), padded * 100 * 4);
  EXPECT_EQ(BlockedBytesPerSample({8, 3, 10, 10}),
            (NativeChannelBlock() == 0 ? 3 : NativeChannelBlock()) * 100 * 4);
}

// Three 16x400x400 samples: their blocked X and Y (20 MB a sample) would not fit the chunk
// budget together, so the op runs one sample at a time; each sample's Y is what a batch of that
// sample alone gives, bit for bit, and the scratch area holds one chunk.
// A 5x5 window: the direct convolution is the only candidate (Winograd takes 3x3), so the chunks
// and the samples alone run one algorithm whatever a loaded machine's timing says, and give the
// same bits; Winograd's scratchpad for one 400x400 sample would not fit the chunk budget anyway.
TEST(ConvOpTest, LargeBatchesRunInChunksAndGiveEachSamplesOwnResult) {
  ConvCase k;
  k.n = 3, k.c = 16, k.m = 16, k.h = k.w = 400, k.kh = k.kw = 5;
  k.pad_t = k.pad_l = k.pad_b = k.pad_r = 2;
  Workspace ws;
  FeedConvInputs(k, 9, &ws);
  Net* net = ws.CreateNet(NetOf({k.Op()}));
  ASSERT_TRUE(net->Run().ok());
  EXPECT_LT(net->scratch_bytes(), static_cast<size_t>(kChunkScratchBytes));
  const std::vector<float> x = Fetch<float>(ws, "X"), y = Fetch<float>(ws, "Y");
  ConvCase one = k;
  one.n = 1;
  const size_t x_sample = x.size() / 3, y_sample = y.size() / 3;
  for (int i = 0; i < 3; ++i) {
    Feed<float>(&ws, "X", one.XDims(),
                std::vector<float>(x.begin() + i * x_sample, x.begin() + (i + 1) * x_sample));
    ASSERT_TRUE(RunOp(&ws, one.Op()));
    EXPECT_TRUE(Fetch<float>(ws, "Y") ==
                std::vector<float>(y.begin() + i * y_sample, y.begin() + (i + 1) * y_sample))
        << "sample " << i;
  }
}

// ResNet-50's 3x3 layer at batch 16: the blocked X and Y fit the chunk budget, but Winograd's
// scratchpad for the whole batch (where the CPU has the kernel) takes the op over it, so the op
// takes smaller chunks until it fits; each sample still gets its own result.
TEST(ConvOpTest, ChunksShrinkUntilThePrimitivesScratchpadFits) {
  ConvCase k;
  k.n = 16, k.c = 64, k.m = 64, k.h = k.w = 56, k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  k.bias = false;
  Workspace ws;
  FeedConvInputs(k, 4, &ws);
  Net* net = ws.CreateNet(NetOf({k.Op()}));
  ASSERT_TRUE(net->Run().ok());
  EXPECT_LE(net->scratch_bytes(), static_cast<size_t>(kChunkScratchBytes));
  const std::vector<float> x = Fetch<float>(ws, "X"), y = Fetch<float>(ws, "Y");
  ConvCase one = k;
  one.n = 1;
  const size_t x_sample = x.size() / 16, y_sample = y.size() / 16;
  Feed<float>(&ws, "X", one.XDims(), std::vector<float>(x.end() - x_sample, x.end()));
  ASSERT_TRUE(RunOp(&ws, one.Op()));
  const std::vector<float> alone = Fetch<float>(ws, "Y");
  for (size_t i = 0; i < y_sample; ++i) {
    ASSERT_NEAR(alone[i], y[y.size() - y_sample + i], 1e-4f * (1 + std::fabs(alone[i]))) << i;
  }
}

// Eight Convs of one shape (sharing cached primitives) and their gradients, on 1 and 2 workers,
// every op with a one-thread team (with their budgets, one worker's ops would get two threads, two
// workers' ops one: other teams, other bits).
TEST(ConvOpTest, DagRunsOnOneAndTwoWorkersAgreeBitForBit) {
  ConvCase k;
  k.n = 4, k.c = 8, k.m = 8, k.h = k.w = 14, k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  const unsigned seed = 77;
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<std::vector<float>> results[2];
  for (int workers : {1, 2}) {
    Workspace ws;
    FeedConvInputs(k, seed, &ws);
    std::vector<std::string> ops;
    for (int i = 0; i < 8; ++i) {
      const std::string y = "Y" + std::to_string(i);
      std::string op = k.Op();
      op.replace(op.find(R"(output: "Y")"), 12, "output: \"" + y + "\"");
      ops.push_back(op);
      ops.push_back(R"(type: "ConvGradient" input: "X" input: "W" input: ")" + y +
                    R"(" output: "dW)" + std::to_string(i) + R"(" output: "db)" +
                    std::to_string(i) + R"(" output: "dX)" + std::to_string(i) + "\"" + k.Args());
    }
    NetDef net = NetOf(ops, "dag");
    Argument* arg = net.add_arg();
    arg->set_name("num_workers");
    arg->set_i(workers);
    arg = net.add_arg();
    arg->set_name("intra_op_threads");
    arg->set_i(1);
    Net* n = ws.CreateNet(net);
    for (int run = 0; run < 3; ++run) ASSERT_TRUE(n->Run().ok());
    for (int i = 0; i < 8; ++i) {
      for (const char* prefix : {"Y", "dW", "db", "dX"}) {
        results[workers - 1].push_back(Fetch<float>(ws, prefix + std::to_string(i)));
      }
    }
  }
  EXPECT_EQ(results[0], results[1]);
}

// A net's bits depend on its ops' teams only, never on what ran before in the process: the
// primitive cache keys hold the team, so a one-thread net after a two-thread one does not borrow
// the two-thread primitives (it did, and computed the two-thread net's bits).
TEST(ConvOpTest, BitsDoNotDependOnWhatRanBeforeInTheProcess) {
  ConvCase k;
  k.n = 8, k.c = 16, k.m = 16, k.h = k.w = 14, k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  auto train_step = [&](int threads) {
    Workspace ws;
    FeedConvInputs(k, 5, &ws);
    NetDef net = NetOf({k.Op(), R"(type: "ConvGradient" input: "X" input: "W" input: "Y" )"
                                R"(output: "dW" output: "db" output: "dX")" + k.Args()});
    Argument* arg = net.add_arg();
    arg->set_name("intra_op_threads");
    arg->set_i(threads);
    EXPECT_TRUE(ws.CreateNet(net)->Run().ok());
    std::vector<float> bits = Fetch<float>(ws, "Y");
    for (const char* blob : {"dW", "db", "dX"}) {
      const std::vector<float> more = Fetch<float>(ws, blob);
      bits.insert(bits.end(), more.begin(), more.end());
    }
    return bits;
  };
  PrimitiveCache::Global().Clear();
  const std::vector<float> alone = train_step(1);
  PrimitiveCache::Global().Clear();
  train_step(2);
  const size_t two_thread_plans = PrimitiveCache::Global().size();
  const std::vector<float> after_two = train_step(1);
  EXPECT_GT(PrimitiveCache::Global().size(), two_thread_plans) << "the 1-thread net made its own";
  EXPECT_TRUE(after_two == alone);
}

// ---- ConvGradient ----

::testing::AssertionResult CheckConvGradient(const ConvCase& k, unsigned seed) {
  Workspace ws;
  FeedConvInputs(k, seed, &ws);
  GradientCheckOptions options;
  options.seed = seed;
  return CheckGradient(ParseOp(k.Op()), &ws, options);
}

TEST(ConvGradientTest, MatchesNumericalGradientWithBias) {
  ConvCase k;
  k.n = 2, k.c = 2, k.m = 3, k.h = 5, k.w = 4, k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  EXPECT_TRUE(CheckConvGradient(k, 21));
}

TEST(ConvGradientTest, MatchesNumericalGradientWithoutBias) {
  ConvCase k;
  k.bias = false, k.n = 2, k.c = 2, k.m = 3, k.h = 5, k.w = 5;
  EXPECT_TRUE(CheckConvGradient(k, 22));
}

TEST(ConvGradientTest, MatchesNumericalGradientWithStrideAndAsymmetricPads) {
  ConvCase k;
  k.n = 1, k.c = 2, k.m = 2, k.h = 7, k.w = 6, k.stride_h = 2, k.stride_w = 3;
  k.pad_t = 1, k.pad_l = 2, k.pad_b = 0, k.pad_r = 1;
  EXPECT_TRUE(CheckConvGradient(k, 23));
}

TEST(ConvGradientTest, MatchesNumericalGradientForLegacyPadModes) {
  for (int mode : {2, 3}) {
    SCOPED_TRACE("legacy_pad " + std::to_string(mode));
    ConvCase k = LegacyPadConv(mode);
    k.n = 1, k.c = 2, k.m = 2;
    EXPECT_TRUE(CheckConvGradient(k, 24 + mode));
  }
}

TEST(ConvGradientTest, MatchesNumericalGradientWithDilationAndGroups) {
  ConvCase k;
  k.n = 1, k.c = 4, k.m = 4, k.h = 7, k.w = 7, k.group = 2, k.dilation_h = 2, k.dilation_w = 2;
  k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  EXPECT_TRUE(CheckConvGradient(k, 24));
}

// dX and dW of an ungrouped, undilated k for output gradient dy, accumulated in double.
void NaiveConvGradients(const ConvCase& k, const std::vector<float>& x, const std::vector<float>& w,
                        const std::vector<float>& dy, std::vector<double>* dx,
                        std::vector<double>* dw) {
  dx->assign(x.size(), 0.0);
  dw->assign(w.size(), 0.0);
  const int64_t oh_n = k.OutH(), ow_n = k.OutW();
  for (int64_t n = 0; n < k.n; ++n) {
    for (int64_t m = 0; m < k.m; ++m) {
      for (int64_t oh = 0; oh < oh_n; ++oh) {
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          const double g = dy[((n * k.m + m) * oh_n + oh) * ow_n + ow];
          for (int64_t c = 0; c < k.c; ++c) {
            for (int64_t i = 0; i < k.kh; ++i) {
              for (int64_t j = 0; j < k.kw; ++j) {
                const int64_t ih = oh * k.stride_h - k.pad_t + i,
                              iw = ow * k.stride_w - k.pad_l + j;
                if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
                const int64_t xi = ((n * k.c + c) * k.h + ih) * k.w + iw;
                const int64_t wi = ((m * k.c + c) * k.kh + i) * k.kw + j;
                (*dx)[xi] += g * w[wi];
                (*dw)[wi] += g * x[xi];
              }
            }
          }
        }
      }
    }
  }
}

// 3x3, stride 1, >= 16 channels in and out: the Winograd kernels (ops/nn/conv_op.h), where oneDNN
// has them. Finite differences cannot check them: Winograd's transforms add float32 rounding noise
// of ~1e-5 of |Y| to the forward values the differences are taken of. So dX and dW are checked
// against the exact (double) gradients instead, within float32 Winograd's rounding.
TEST(ConvGradientTest, WinogradShapesMatchTheExactGradients) {
  for (const int64_t channels : {16, 32}) {
    ConvCase k;
    k.bias = false, k.n = 2, k.c = k.m = channels, k.h = 6, k.w = 7;
    k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
    Workspace ws;
    FeedConvInputs(k, 25, &ws);
    std::mt19937 rng(26);
    Feed<float>(&ws, "dY", k.YDims(), RandomValues(&rng, k.n * k.m * k.OutH() * k.OutW()));
    ASSERT_TRUE(RunOp(&ws, R"(type: "ConvGradient" input: "X" input: "W" input: "dY" )"
                           R"(output: "dW" output: "dX" arg { name: "no_bias" i: 1 })" +
                               k.Args()));
    std::vector<double> dx, dw;
    NaiveConvGradients(k, Fetch<float>(ws, "X"), Fetch<float>(ws, "W"), Fetch<float>(ws, "dY"), &dx,
                       &dw);
    // The forward's tolerance (ExpectMatchesNaive); measured worst errors: 1.4e-5 (dX, 16
    // channels) and 2.1e-5 (dX, 32 channels).
    const double tol = 1e-5 * std::sqrt(static_cast<double>(k.c * k.kh * k.kw)) + 1e-5;
    const std::vector<float> got_dx = Fetch<float>(ws, "dX"), got_dw = Fetch<float>(ws, "dW");
    for (size_t i = 0; i < dx.size(); ++i) ASSERT_NEAR(got_dx[i], dx[i], tol) << "dX " << i;
    for (size_t i = 0; i < dw.size(); ++i) ASSERT_NEAR(got_dw[i], dw[i], tol) << "dW " << i;
  }
}

// ConvGradient with and without dX, and without bias, against the full gradient.
TEST(ConvGradientTest, LeavesOutDxAndDbiasAsCaffe2Does) {
  ConvCase k;
  k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  Workspace ws;
  FeedConvInputs(k, 31, &ws);
  std::mt19937 rng(32);
  Feed<float>(&ws, "dY", k.YDims(), RandomValues(&rng, k.n * k.m * k.OutH() * k.OutW()));
  const std::string in = R"(type: "ConvGradient" input: "X" input: "W" input: "dY" )";
  ASSERT_TRUE(RunOp(&ws, in + R"(output: "dW" output: "db" output: "dX")" + k.Args()));
  ASSERT_TRUE(RunOp(&ws, in + R"(output: "dW2" output: "db2")" + k.Args()));
  ASSERT_TRUE(
      RunOp(&ws, in + R"(output: "dW3" output: "dX3" arg { name: "no_bias" i: 1 })" + k.Args()));
  ASSERT_TRUE(RunOp(&ws, in + R"(output: "dW4" arg { name: "no_bias" i: 1 })" + k.Args()));
  EXPECT_EQ(ShapeOf(ws, "db"), (std::vector<int64_t>{k.m}));
  EXPECT_EQ(ShapeOf(ws, "dX"), k.XDims());
  EXPECT_EQ(Fetch<float>(ws, "dW2"), Fetch<float>(ws, "dW"));
  EXPECT_EQ(Fetch<float>(ws, "db2"), Fetch<float>(ws, "db"));
  EXPECT_EQ(Fetch<float>(ws, "dW3"), Fetch<float>(ws, "dW"));
  EXPECT_EQ(Fetch<float>(ws, "dX3"), Fetch<float>(ws, "dX"));
  EXPECT_EQ(Fetch<float>(ws, "dW4"), Fetch<float>(ws, "dW"));
  // db is the sum of dY over N, H and W.
  const std::vector<float> dy = Fetch<float>(ws, "dY"), db = Fetch<float>(ws, "db");
  const int64_t plane = k.OutH() * k.OutW();
  for (int64_t m = 0; m < k.m; ++m) {
    double sum = 0;
    for (int64_t n = 0; n < k.n; ++n) {
      for (int64_t i = 0; i < plane; ++i) sum += dy[(n * k.m + m) * plane + i];
    }
    EXPECT_NEAR(db[m], sum, 1e-4) << m;
  }
}

TEST(ConvGradientTest, EmptyBatchGivesZeroFilterAndBiasGradients) {
  ConvCase k;
  k.n = 0;
  Workspace ws;
  FeedConvInputs(k, 1, &ws);
  Feed<float>(&ws, "dY", k.YDims(), {});
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConvGradient" input: "X" input: "W" input: "dY"
                            output: "dW" output: "db" output: "dX")"));
  EXPECT_EQ(Fetch<float>(ws, "dW"), std::vector<float>(4 * 3 * 3 * 3, 0.f));
  EXPECT_EQ(Fetch<float>(ws, "db"), std::vector<float>(4, 0.f));
  EXPECT_EQ(ShapeOf(ws, "dX"), k.XDims());
}

TEST(ConvGradientTest, RejectsDyOfTheWrongShape) {
  ConvCase k;
  Workspace ws;
  FeedConvInputs(k, 1, &ws);
  Feed<float>(&ws, "dY", {2, 4, 5, 5}, std::vector<float>(200, 0.f));
  const std::string op = R"(type: "ConvGradient" input: "X" input: "W" input: "dY"
                            output: "dW" output: "db" output: "dX")";
  const std::string error = InferError(ws, op);
  EXPECT_NE(error.find("dY 'dY' float32[2,4,5,5] must be float32[2,4,5,4]"), std::string::npos)
      << error;
  EXPECT_NE(RunOpError(&ws, op).find(error), std::string::npos);
  EXPECT_NE(RunOpError(&ws, R"(type: "ConvGradient" input: "X" input: "W" input: "dY"
                               output: "dW" arg { name: "no_bias" i: 0 })")
                .find("ConvGradient with no_bias=0 writes dfilter, dbias[, dX], but names 1"),
            std::string::npos);
}

// ---- performance ----

// The best of 5 batches of `runs` runs, after a warm-up run (plans, buffers): the machine may be
// shared, and oneDNN's OpenMP threads slow down badly when another process takes a core.
double MillisecondsPerRun(Net* net, int runs) {
  EXPECT_TRUE(net->Run().ok());
  double best = 1e30;
  for (int batch = 0; batch < 5; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i) EXPECT_TRUE(net->Run().ok());
    const std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    best = std::min(best, elapsed.count() / runs);
  }
  return best;
}

// A ResNet-20 stage-1 layer: 64 x 16 x 28 x 28, 16 filters of 3 x 3, pad 1. Prints times only.
TEST(ConvOpTest, ResNet20LayerTimes) {
  ConvCase k;
  k.n = 64, k.c = 16, k.m = 16, k.h = k.w = 28, k.pad_t = k.pad_l = k.pad_b = k.pad_r = 1;
  Workspace ws;
  FeedConvInputs(k, 5, &ws);
  std::mt19937 rng(6);
  Feed<float>(&ws, "dY", k.YDims(), RandomValues(&rng, k.n * k.m * k.OutH() * k.OutW()));
  Net* forward = ws.CreateNet(NetOf({k.Op()}));
  NetDef backward_def = NetOf({R"(type: "ConvGradient" input: "X" input: "W" input: "dY"
                                  output: "dW" output: "db" output: "dX")" +
                               k.Args()});
  backward_def.set_name("backward");
  Net* backward = ws.CreateNet(backward_def);
  const double fwd = MillisecondsPerRun(forward, 10), bwd = MillisecondsPerRun(backward, 10);
  const double gflop = 2.0 * k.n * k.m * k.OutH() * k.OutW() * k.c * k.kh * k.kw / 1e9;
  std::printf(
      "Conv 64x16x28x28, 16 3x3 filters: forward %.2f ms (%.1f GFLOP/s), "
      "backward (dW, db, dX) %.2f ms (%.1f GFLOP/s)\n",
      fwd, gflop / fwd * 1e3, bwd, 2 * gflop / bwd * 1e3);
}

}  // namespace
}  // namespace braid::test
