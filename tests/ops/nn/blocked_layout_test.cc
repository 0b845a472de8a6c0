// Tensors in a blocked layout (runtime/core/tensor.h), by 8 and by 16 channels whatever this CPU's
// own block: every op that declares blocked ports
// (OpSchema::BlockedPorts) or LayoutFollowsInputs gives, for blocked inputs and outputs asked
// blocked, the same values as for plain ones; plain readers refuse blocked tensors; the tensor
// rules (writes reset the layout, shape checks) hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "braid/status.h"
#include "ops/op_test_util.h"
#include "runtime/exec/net.h"

namespace braid::test {
namespace {

// Plain NCHW <-> nChw8c / nChw16c, written out here independently of oneDNN.
int64_t BlockedIndex(const std::vector<int64_t>& d, int64_t b, int64_t n, int64_t c, int64_t hw) {
  const int64_t spatial = d[2] * d[3];
  return ((n * (d[1] / b) + c / b) * spatial + hw) * b + c % b;
}

std::vector<float> ToBlocked(const std::vector<float>& plain, const std::vector<int64_t>& d,
                             int64_t b) {
  std::vector<float> out(plain.size());
  const int64_t spatial = d[2] * d[3];
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t hw = 0; hw < spatial; ++hw)
        out[BlockedIndex(d, b, n, c, hw)] = plain[(n * d[1] + c) * spatial + hw];
  return out;
}

std::vector<float> ToPlain(const float* blocked, const std::vector<int64_t>& d, int64_t b) {
  const int64_t spatial = d[2] * d[3];
  std::vector<float> out(d[0] * d[1] * spatial);
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t hw = 0; hw < spatial; ++hw)
        out[(n * d[1] + c) * spatial + hw] = blocked[BlockedIndex(d, b, n, c, hw)];
  return out;
}

std::vector<float> Random(std::mt19937* rng, int64_t n, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(*rng);
  return v;
}

// Rewrites a fed tensor's values in the order blocked by `b` channels and marks it so.
void MakeBlocked(Workspace* ws, const std::string& name, int64_t b) {
  Tensor* t = ws->GetBlob(name);
  const std::vector<float> plain = Fetch<float>(*ws, name);
  const std::vector<float> blocked = ToBlocked(plain, t->shape(), b);
  std::copy(blocked.begin(), blocked.end(), t->mutable_data<float>());
  t->set_layout(BlockedLayout(b));
}

// A blob's values in plain order, whatever its layout.
std::vector<float> FetchAnyLayout(const Workspace& ws, const std::string& name) {
  const Tensor* t = ws.GetBlob(name);
  const float* data = t->any_layout_data<float>();
  if (t->layout() != Layout::kPlain) return ToPlain(data, t->shape(), ChannelBlock(t->layout()));
  return std::vector<float>(data, data + t->numel());
}

using FeedFn = void (*)(Workspace*);

struct LayoutCase {
  std::string op;                      // text format, without blocked_outputs
  FeedFn feed;
  std::set<std::string> blocked_inputs;
  std::vector<int> blocked_outputs;
  bool exact = true;  // false: a different oneDNN kernel runs (pooling on another layout)
};

std::string WithBlockedOutputs(const std::string& op, const std::vector<int>& outputs, int64_t b) {
  if (outputs.empty()) return op;
  std::string arg = " arg { name: \"blocked_outputs\"";
  for (int o : outputs) arg += " ints: " + std::to_string(o);
  return op + arg + " } arg { name: \"channel_block\" i: " + std::to_string(b) + " }";
}

// Runs the case's op with plain tensors, then in a second workspace with its inputs and outputs
// blocked by `b` (twice, then plain again: the op re-prepares on a layout change), and compares
// every output.
void ExpectSameValues(const LayoutCase& c, int64_t b) {
  const OperatorDef def = ParseOp(c.op);
  Workspace plain_ws;
  c.feed(&plain_ws);
  ASSERT_TRUE(plain_ws.RunNetOnce(NetOf({c.op})).ok());

  Workspace ws;
  c.feed(&ws);
  const std::string blocked_op = WithBlockedOutputs(c.op, c.blocked_outputs, b);
  Net* net = ws.CreateNet(NetOf({blocked_op}));
  ASSERT_NE(net, nullptr);
  for (int run = 0; run < 2; ++run) {
    c.feed(&ws);
    for (const std::string& in : c.blocked_inputs) MakeBlocked(&ws, in, b);
    const Status s = net->Run();
    ASSERT_TRUE(s.ok()) << s.message();
  }
  for (int o = 0; o < def.output_size(); ++o) {
    const std::string& name = def.output(o);
    const bool asked = std::count(c.blocked_outputs.begin(), c.blocked_outputs.end(), o) > 0;
    const bool follows = FindSchema(def.type())->layout_follows_inputs() && !c.blocked_inputs.empty();
    EXPECT_EQ(ws.GetBlob(name)->layout(), asked || follows ? BlockedLayout(b) : Layout::kPlain)
        << name;
    const std::vector<float> want = FetchAnyLayout(plain_ws, name);
    const std::vector<float> got = FetchAnyLayout(ws, name);
    ASSERT_EQ(got.size(), want.size()) << name;
    for (size_t i = 0; i < want.size(); ++i) {
      if (c.exact) {
        ASSERT_EQ(got[i], want[i]) << name << " at " << i;
      } else {
        ASSERT_NEAR(got[i], want[i], 1e-6 + 1e-6 * std::abs(want[i])) << name << " at " << i;
      }
    }
  }
  // Plain inputs again: the op prepares anew and reads them as plain (unless that would take a
  // SpatialBNApply in place across layouts, which it refuses).
  const bool in_place = std::any_of(def.output().begin(), def.output().end(), [&](const auto& o) {
    return std::find(def.input().begin(), def.input().end(), o) != def.input().end();
  });
  if (in_place && def.type() == "SpatialBNApply" && !c.blocked_outputs.empty()) return;
  c.feed(&ws);
  ASSERT_TRUE(net->Run().ok());
  for (int o = 0; o < def.output_size(); ++o) {
    if (std::count(c.blocked_outputs.begin(), c.blocked_outputs.end(), o) > 0) continue;
    if (FindSchema(def.type())->layout_follows_inputs()) continue;
    const std::string& name = def.output(o);
    const std::vector<float> want = FetchAnyLayout(plain_ws, name);
    const std::vector<float> got = FetchAnyLayout(ws, name);
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-6 + 1e-6 * std::abs(want[i])) << name << " plain rerun";
    }
  }
}

// 2 x 32 x 6 x 6 activations (two channel blocks), 32 filters of 3x3.
void FeedConvBn(Workspace* ws) {
  std::mt19937 rng(7);
  Feed<float>(ws, "X", {2, 32, 6, 6}, Random(&rng, 2 * 32 * 36));
  Feed<float>(ws, "W", {32, 32, 3, 3}, Random(&rng, 32 * 32 * 9));
  Feed<float>(ws, "dY", {2, 32, 6, 6}, Random(&rng, 2 * 32 * 36));
  Feed<float>(ws, "R", {2, 32, 6, 6}, Random(&rng, 2 * 32 * 36));
  Feed<float>(ws, "s", {32}, Random(&rng, 32, 0.5f, 1.5f));
  Feed<float>(ws, "b", {32}, Random(&rng, 32));
  Feed<float>(ws, "rm", {32}, Random(&rng, 32));
  Feed<float>(ws, "rv", {32}, Random(&rng, 32, 0.5f, 1.5f));
  Feed<float>(ws, "sm", {32}, Random(&rng, 32));
  Feed<float>(ws, "siv", {32}, Random(&rng, 32, 0.5f, 1.5f));
}

// Pooling 2 x 32 x 8 x 8 by 2x2 windows: X, its pooled Y and dY.
void FeedPool(Workspace* ws) {
  std::mt19937 rng(11);
  Feed<float>(ws, "X", {2, 32, 8, 8}, Random(&rng, 2 * 32 * 64));
  Feed<float>(ws, "dY", {2, 32, 4, 4}, Random(&rng, 2 * 32 * 16));
  Feed<float>(ws, "Y", {2, 32, 4, 4}, Random(&rng, 2 * 32 * 16));
  Feed<float>(ws, "dG", {2, 32, 1, 1}, Random(&rng, 2 * 32));
  Feed<float>(ws, "G", {2, 32, 1, 1}, Random(&rng, 2 * 32));
}

// Over 32K elements, so that elementwise loops split across threads (ops/common/parallel.h).
void FeedLarge(Workspace* ws) {
  std::mt19937 rng(13);
  Feed<float>(ws, "X", {4, 32, 24, 24}, Random(&rng, 4 * 32 * 576));
  Feed<float>(ws, "R", {4, 32, 24, 24}, Random(&rng, 4 * 32 * 576));
  Feed<float>(ws, "s", {32}, Random(&rng, 32, 0.5f, 1.5f));
  Feed<float>(ws, "b", {32}, Random(&rng, 32));
  Feed<float>(ws, "sm", {32}, Random(&rng, 32));
  Feed<float>(ws, "siv", {32}, Random(&rng, 32, 0.5f, 1.5f));
}

constexpr char kConv[] = R"(type: "Conv" input: "X" input: "W" output: "Y"
    arg { name: "kernel" i: 3 } arg { name: "pad" i: 1 })";
constexpr char kConvGrad[] = R"(type: "ConvGradient" input: "X" input: "W" input: "dY"
    output: "dW" output: "dX" arg { name: "kernel" i: 3 } arg { name: "pad" i: 1 }
    arg { name: "no_bias" i: 1 })";
constexpr char kBn[] = R"(type: "SpatialBN" input: "X" input: "s" input: "b" input: "rm"
    input: "rv" output: "Y" output: "rm" output: "rv" output: "sm2" output: "siv2")";
constexpr char kBnTest[] = R"(type: "SpatialBN" input: "X" input: "s" input: "b" input: "rm"
    input: "rv" output: "Y" arg { name: "is_test" i: 1 })";
constexpr char kBnInPlace[] = R"(type: "SpatialBN" input: "X" input: "s" input: "b" input: "rm"
    input: "rv" output: "X" arg { name: "is_test" i: 1 })";
constexpr char kBnTrainInPlace[] = R"(type: "SpatialBN" input: "X" input: "s" input: "b"
    input: "rm" input: "rv" output: "X" output: "rm" output: "rv" output: "sm2" output: "siv2")";
constexpr char kBnGrad[] = R"(type: "SpatialBNGradient" input: "X" input: "s" input: "dY"
    input: "sm" input: "siv" output: "dX" output: "ds" output: "db")";
constexpr char kApply[] = R"(type: "SpatialBNApply" input: "X" input: "s" input: "b"
    input: "sm" input: "siv" input: "R" output: "Y" arg { name: "relu" i: 1 })";

// Each test runs for both blocks (the parameter), whichever this CPU's kernels prefer: oneDNN
// reorders where its primitive wants the other one, and the values must not change.
class BlockedLayoutTest : public ::testing::TestWithParam<int64_t> {
 protected:
  int64_t b() const { return GetParam(); }
  void ExpectSameValues(const LayoutCase& c) const { test::ExpectSameValues(c, b()); }
};

INSTANTIATE_TEST_SUITE_P(Blocks, BlockedLayoutTest, ::testing::Values(8, 16),
                         [](const auto& info) { return "By" + std::to_string(info.param); });

TEST_P(BlockedLayoutTest, ConvReadsAndWritesEitherLayoutWithTheSameValues) {
  ExpectSameValues({kConv, FeedConvBn, {"X"}, {0}});
  ExpectSameValues({kConv, FeedConvBn, {}, {0}});
  ExpectSameValues({kConv, FeedConvBn, {"X"}, {}});
}

TEST_P(BlockedLayoutTest, ConvGradientReadsAndWritesEitherLayoutWithTheSameValues) {
  ExpectSameValues({kConvGrad, FeedConvBn, {"X", "dY"}, {1}});
  ExpectSameValues({kConvGrad, FeedConvBn, {"dY"}, {}});
}

TEST_P(BlockedLayoutTest, SpatialBNAndItsGradientReadAndWriteEitherLayoutWithTheSameValues) {
  ExpectSameValues({kBn, FeedConvBn, {"X"}, {0}});
  ExpectSameValues({kBnTest, FeedConvBn, {"X"}, {}});
  ExpectSameValues({kBnInPlace, FeedConvBn, {"X"}, {0}});
  ExpectSameValues({kBnInPlace, FeedConvBn, {"X"}, {}});  // in place, blocked X to plain Y
  ExpectSameValues({kBnTrainInPlace, FeedConvBn, {"X"}, {}});
  ExpectSameValues({kBnTrainInPlace, FeedConvBn, {}, {0}});
  ExpectSameValues({kBnGrad, FeedConvBn, {"X", "dY"}, {0}});
  ExpectSameValues({kBnGrad, FeedConvBn, {"dY"}, {}});
}

TEST_P(BlockedLayoutTest, SpatialBNApplyMixesLayoutsWithTheSameValues) {
  ExpectSameValues({kApply, FeedConvBn, {"X", "R"}, {0}});  // one layout: the fast path
  ExpectSameValues({kApply, FeedConvBn, {"X"}, {}});        // mixed: element by element
  ExpectSameValues({kApply, FeedConvBn, {"R"}, {0}});
  // Large enough to split across threads, in place on X and on the residual.
  ExpectSameValues({kApply, FeedLarge, {"X", "R"}, {0}});
  const std::string on_x = R"(type: "SpatialBNApply" input: "X" input: "s" input: "b"
      input: "sm" input: "siv" input: "R" output: "X")";
  const std::string on_r = R"(type: "SpatialBNApply" input: "X" input: "s" input: "b"
      input: "sm" input: "siv" input: "R" output: "R" arg { name: "relu" i: 1 })";
  ExpectSameValues({on_x, FeedLarge, {"X", "R"}, {0}});
  ExpectSameValues({on_r, FeedLarge, {"X", "R"}, {0}});
  ExpectSameValues({on_x, FeedLarge, {}, {}});
}

TEST_P(BlockedLayoutTest, SpatialBNApplyRefusesInPlaceAcrossLayoutsBeforeWriting) {
  Workspace ws;
  FeedLarge(&ws);
  MakeBlocked(&ws, "X", b());
  const std::vector<float> before = FetchAnyLayout(ws, "X");
  const std::string error = RunOpError(&ws, R"(type: "SpatialBNApply" input: "X" input: "s"
      input: "b" input: "sm" input: "siv" input: "R" output: "X")");
  EXPECT_NE(error.find("in place only when"), std::string::npos) << error;
  EXPECT_EQ(ws.GetBlob("X")->layout(), BlockedLayout(b()));
  EXPECT_EQ(FetchAnyLayout(ws, "X"), before);
}

TEST_P(BlockedLayoutTest, PoolingRunsOnTheInputsLayout) {
  const std::string max = R"(type: "MaxPool" input: "X" output: "Y"
      arg { name: "kernel" i: 2 } arg { name: "stride" i: 2 })";
  const std::string avg = R"(type: "AveragePool" input: "X" output: "G"
      arg { name: "global_pooling" i: 1 })";
  ExpectSameValues({max, FeedPool, {"X"}, {0}, false});
  ExpectSameValues({max, FeedPool, {"X"}, {}, false});
  ExpectSameValues({avg, FeedPool, {"X"}, {}, false});  // global: blocked in, plain out
  const std::string max_grad = R"(type: "MaxPoolGradient" input: "X" input: "Y" input: "dY"
      output: "dX" arg { name: "kernel" i: 2 } arg { name: "stride" i: 2 })";
  const std::string avg_grad = R"(type: "AveragePoolGradient" input: "X" input: "G"
      input: "dG" output: "dX" arg { name: "global_pooling" i: 1 })";
  ExpectSameValues({max_grad, FeedPool, {"X", "Y", "dY"}, {0}, false});
  ExpectSameValues({avg_grad, FeedPool, {"X"}, {0}, false});  // dY plain (from an FC)
}

TEST_P(BlockedLayoutTest, ElementwiseOpsGiveTheirOutputsTheInputsLayout) {
  ExpectSameValues({R"(type: "Relu" input: "X" output: "Y")", FeedConvBn, {"X"}, {}});
  ExpectSameValues({R"(type: "Relu" input: "X" output: "X")", FeedConvBn, {"X"}, {}});
  ExpectSameValues(
      {R"(type: "ReluGradient" input: "R" input: "dY" output: "dX")", FeedConvBn, {"R", "dY"}, {}});
  ExpectSameValues({R"(type: "Sum" input: "X" input: "R" output: "Y")", FeedConvBn, {"X", "R"}, {}});
  ExpectSameValues({R"(type: "Copy" input: "X" output: "Y")", FeedConvBn, {"X"}, {}});
  // ReLU6 (MobileNet-V2's Clip 0..6) and its gradient, in place too.
  const std::string clip = R"(arg { name: "min" f: 0 } arg { name: "max" f: 0.5 })";
  ExpectSameValues({R"(type: "Clip" input: "X" output: "Y" )" + clip, FeedConvBn, {"X"}, {}});
  ExpectSameValues({R"(type: "Clip" input: "X" output: "X" )" + clip, FeedConvBn, {"X"}, {}});
  ExpectSameValues({R"(type: "ClipGradient" input: "R" input: "dY" output: "dX" )" + clip,
                    FeedConvBn, {"R", "dY"}, {}});
}

// Concat along the channels: one layout throughout (the plain copy) or a mix (element by element),
// against the plain Concat.
TEST_P(BlockedLayoutTest, ConcatAlongChannelsJoinsEitherLayoutWithTheSameValues) {
  const std::string concat = R"(type: "Concat" input: "X" input: "R" output: "Y"
      output: "split" arg { name: "axis" i: 1 })";
  Workspace plain_ws;
  FeedConvBn(&plain_ws);
  ASSERT_TRUE(plain_ws.RunNetOnce(NetOf({concat})).ok());
  const std::vector<float> want = Fetch<float>(plain_ws, "Y");
  struct Case {
    std::set<std::string> blocked_inputs;
    bool blocked_output;
  };
  for (const Case& c : std::vector<Case>{{{"X", "R"}, true}, {{"X"}, true}, {{"R"}, false},
                                         {{}, true}, {{"X", "R"}, false}}) {
    Workspace ws;
    FeedConvBn(&ws);
    for (const std::string& in : c.blocked_inputs) MakeBlocked(&ws, in, b());
    const std::string op = c.blocked_output ? WithBlockedOutputs(concat, {0}, b()) : concat;
    const Status s = ws.RunNetOnce(NetOf({op}));
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(ws.GetBlob("Y")->layout(), c.blocked_output ? BlockedLayout(b()) : Layout::kPlain);
    EXPECT_EQ(FetchAnyLayout(ws, "Y"), want) << c.blocked_inputs.size() << c.blocked_output;
    EXPECT_EQ(Fetch<int32_t>(ws, "split"), (std::vector<int32_t>{32, 32}));
  }
}

TEST_P(BlockedLayoutTest, ElementwiseOpsRefuseInputsOfDifferentLayouts) {
  Workspace ws;
  FeedConvBn(&ws);
  MakeBlocked(&ws, "X", b());
  const std::string error = RunOpError(&ws, R"(type: "Sum" input: "X" input: "R" output: "Y")");
  EXPECT_NE(error.find("must have one layout"), std::string::npos) << error;
  EXPECT_NE(error.find("'R'"), std::string::npos) << error;
}

TEST_P(BlockedLayoutTest, PlainReadersRefuseBlockedTensorsNamingTheOp) {
  Workspace ws;
  FeedConvBn(&ws);
  MakeBlocked(&ws, "X", b());
  const std::string error =
      RunOpError(&ws, R"(type: "Flatten" name: "flat" input: "X" output: "F")");
  EXPECT_NE(error.find("Flatten"), std::string::npos) << error;
  EXPECT_NE(error.find("not in the plain layout"), std::string::npos) << error;
}

// Checked when the net is built, through elementwise ops, for readers in place too (their write
// would reset the layout before they read, so the tensor could not tell).
TEST_P(BlockedLayoutTest, NetsWhoseOpsWouldReadABlockedBlobPlainAreRefused) {
  Workspace ws;
  FeedConvBn(&ws);
  const std::string conv = WithBlockedOutputs(kConv, {0}, b());
  for (const std::vector<std::string>& ops : std::vector<std::vector<std::string>>{
           {conv, R"(type: "Sigmoid" name: "sig" input: "Y" output: "Y")"},
           {conv, R"(type: "Relu" input: "Y" output: "Z")",
            R"(type: "Flatten" name: "flat" input: "Z" output: "F")"}}) {
    try {
      ws.CreateNet(NetOf(ops));
      ADD_FAILURE() << "accepted " << ops.back();
    } catch (const Error& e) {
      const std::string error = e.what();
      EXPECT_NE(error.find("op #" + std::to_string(ops.size() - 1)), std::string::npos) << error;
      // The writer named: the Conv, or the Relu passing its blocked output on.
      const std::string writer = "op #" + std::to_string(ops.size() - 2) + " (" +
                                 ParseOp(ops[ops.size() - 2]).type() + " '') writes it";
      EXPECT_NE(error.find("input '" + ParseOp(ops.back()).input(0) + "' may be blocked (net 'test' " +
                           writer),
                std::string::npos)
          << error;
    }
  }
  // The same ops reading the plain Y are fine.
  EXPECT_NE(ws.CreateNet(NetOf({kConv, R"(type: "Sigmoid" input: "Y" output: "Y")"})), nullptr);
}

TEST_P(BlockedLayoutTest, BlockedOutputsOutsideTheOpsPortsAreRejectedWhenTheNetIsBuilt) {
  Workspace ws;
  FeedConvBn(&ws);
  // SpatialBN's running mean, an elementwise op's output, Concat along another axis than C.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {WithBlockedOutputs(kBn, {1}, b()), "blocked_outputs names output 1"},
      {WithBlockedOutputs(R"(type: "Relu" input: "X" output: "Y")", {0}, b()),
       "blocked_outputs names output 0"},
      {WithBlockedOutputs(R"(type: "Concat" input: "X" input: "R" output: "Y"
           output: "split" arg { name: "axis" i: 2 })",
                          {0}, b()),
       "blocked_outputs names output 0"},
  };
  for (const auto& [op, expected] : cases) {
    try {
      ws.CreateNet(NetOf({op}));
      ADD_FAILURE() << "accepted " << op;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

TEST(TensorLayoutTest, Rules) {
  Tensor t(DType::kFloat32, {2, 32, 3, 3});
  t.mutable_data<float>();
  t.set_layout(Layout::kBlocked16);
  EXPECT_THROW(t.data<float>(), Error);
  EXPECT_THROW(t.raw_data(), Error);
  EXPECT_NE(t.any_layout_data<float>(), nullptr);
  EXPECT_NE(t.ShapeString().find("blocked16"), std::string::npos);

  Tensor shared;
  shared.ShareData(t);
  EXPECT_EQ(shared.layout(), Layout::kBlocked16);
  Tensor copy;
  copy.CopyFrom(t);
  EXPECT_EQ(copy.layout(), Layout::kBlocked16);

  t.mutable_data<float>();  // a write: plain until the writer says otherwise
  EXPECT_EQ(t.layout(), Layout::kPlain);
  t.set_layout(Layout::kBlocked16);
  t.Reshape({2, 32, 3, 3});  // the same shape keeps it
  EXPECT_EQ(t.layout(), Layout::kBlocked16);
  t.Reshape({2, 32, 9});
  EXPECT_EQ(t.layout(), Layout::kPlain);

  EXPECT_THROW(t.set_layout(Layout::kBlocked16), Error);  // 3-D
  Tensor eight(DType::kFloat32, {2, 8, 3, 3});
  eight.mutable_data<float>();
  EXPECT_THROW(eight.set_layout(Layout::kBlocked16), Error);  // C % 16 != 0
  eight.set_layout(Layout::kBlocked8);                         // C % 8 == 0
  EXPECT_NE(eight.ShapeString().find("(blocked8)"), std::string::npos);
  Tensor twelve(DType::kFloat32, {2, 12, 3, 3});
  EXPECT_THROW(twelve.set_layout(Layout::kBlocked8), Error);  // C % 8 != 0
  Tensor ints(DType::kInt32, {2, 16, 3, 3});
  EXPECT_THROW(ints.set_layout(Layout::kBlocked16), Error);
  EXPECT_THROW(BlockedLayout(4), Error);
}

TEST(TensorLayoutTest, ABlockedOutputsArgumentAsksForAnEightOrSixteenChannelBlock) {
  Workspace ws;
  std::mt19937 rng(3);
  Feed<float>(&ws, "X", {2, 32, 6, 6}, Random(&rng, 2 * 32 * 36));
  Feed<float>(&ws, "W", {32, 32, 3, 3}, Random(&rng, 32 * 32 * 9));
  const std::string conv = WithBlockedOutputs(kConv, {0}, 12);
  try {
    ws.CreateNet(NetOf({conv}));
    ADD_FAILURE() << "accepted " << conv;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("channel_block is 12; a blocked layout has 8 or 16"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace braid::test
