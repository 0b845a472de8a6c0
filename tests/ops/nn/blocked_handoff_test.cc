// The blocked-copy handoff (ops/nn/dnnl_util.h, BoundTensor::Publish): SpatialBN takes Conv's
// blocked Y and ConvGradient takes SpatialBNGradient's blocked dX instead of reordering again, only
// when nothing wrote the tensor or used the scratch area in between, with the same bits as ops run
// apart.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ops/nn/dnnl_util.h"
#include "ops/op_test_util.h"
#include "runtime/net.h"

namespace braid::test {
namespace {

constexpr char kConv[] = R"(type: "Conv" input: "A" input: "W" output: "X"
    arg { name: "kernel" i: 3 } arg { name: "pad" i: 1 })";
constexpr char kBn[] = R"(type: "SpatialBN" input: "X" input: "s" input: "b" input: "rm"
    input: "rv" output: "Y" output: "rm" output: "rv" output: "sm" output: "siv")";
constexpr char kBnGrad[] = R"(type: "SpatialBNGradient" input: "X" input: "s" input: "dY"
    input: "sm" input: "siv" output: "dX" output: "ds" output: "db")";
constexpr char kConvGrad[] = R"(type: "ConvGradient" input: "A" input: "W" input: "dX"
    output: "dW" output: "dA" arg { name: "kernel" i: 3 } arg { name: "pad" i: 1 }
    arg { name: "no_bias" i: 1 })";

std::vector<float> Random(std::mt19937* rng, size_t n) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(*rng);
  return v;
}

// 16 channels in and out (blocked layouts), 4 x 16 x 12 x 12.
void FeedInputs(Workspace* ws) {
  std::mt19937 rng(3);
  Feed<float>(ws, "A", {4, 16, 12, 12}, Random(&rng, 4 * 16 * 144));
  Feed<float>(ws, "W", {16, 16, 3, 3}, Random(&rng, 16 * 16 * 9));
  Feed<float>(ws, "s", {16}, std::vector<float>(16, 1.5f));
  Feed<float>(ws, "b", {16}, std::vector<float>(16, 0.25f));
  Feed<float>(ws, "rm", {16}, std::vector<float>(16, 0.f));
  Feed<float>(ws, "rv", {16}, std::vector<float>(16, 1.f));
  Feed<float>(ws, "dY", {4, 16, 12, 12}, Random(&rng, 4 * 16 * 144));
}

// `ops` in one net, run 3 times; the blobs `out` and the handoffs of the last 2 runs (the first
// run grows the scratch area, which drops any handoff).
std::vector<std::vector<float>> RunTogether(const std::vector<std::string>& ops,
                                            const std::vector<std::string>& out,
                                            int64_t* handoffs) {
  Workspace ws;
  FeedInputs(&ws);
  Net* net = ws.CreateNet(NetOf(ops));
  EXPECT_TRUE(net->Run().ok());
  const int64_t before = HandedOverCopies();
  for (int run = 0; run < 2; ++run) {
    FeedInputs(&ws);  // the same inputs (running statistics too) every run
    EXPECT_TRUE(net->Run().ok());
  }
  *handoffs = HandedOverCopies() - before;
  std::vector<std::vector<float>> values;
  for (const std::string& name : out) values.push_back(Fetch<float>(ws, name));
  return values;
}

// Each op in a net of its own (its own scratch area): no handoff.
std::vector<std::vector<float>> RunApart(const std::vector<std::string>& ops,
                                         const std::vector<std::string>& out) {
  Workspace ws;
  FeedInputs(&ws);
  for (const std::string& op : ops) EXPECT_TRUE(ws.RunNetOnce(NetOf({op})).ok()) << op;
  std::vector<std::vector<float>> values;
  for (const std::string& name : out) values.push_back(Fetch<float>(ws, name));
  return values;
}

TEST(BlockedHandoffTest, SpatialBNAndConvGradientTakeTheCopiesTheirProducersLeft) {
  const std::vector<std::string> ops{kConv, kBn, kBnGrad, kConvGrad};
  const std::vector<std::string> out{"X", "Y", "dX", "dW", "dA"};
  int64_t handoffs = 0;
  EXPECT_EQ(RunTogether(ops, out, &handoffs), RunApart(ops, out));
  EXPECT_EQ(handoffs, 4);  // X to SpatialBN, dX to ConvGradient, in each of 2 runs
}

TEST(BlockedHandoffTest, NoHandoffAfterTheTensorIsWrittenAgain) {
  const std::string relu = R"(type: "Relu" input: "X" output: "X")";
  const std::vector<std::string> ops{kConv, relu, kBn};
  int64_t handoffs = 0;
  EXPECT_EQ(RunTogether(ops, {"Y"}, &handoffs), RunApart(ops, {"Y"}));
  EXPECT_EQ(handoffs, 0);
}

TEST(BlockedHandoffTest, NoHandoffAfterAnotherOpUsedTheScratchArea) {
  // An inference SpatialBN on another tensor: its blocked copy overwrites the area's start.
  const std::string other = R"(type: "SpatialBN" input: "A" input: "s" input: "b" input: "rm"
      input: "rv" output: "A2" arg { name: "is_test" i: 1 })";
  const std::vector<std::string> ops{kConv, other, kBn};
  int64_t handoffs = 0;
  EXPECT_EQ(RunTogether(ops, {"Y", "A2"}, &handoffs), RunApart(ops, {"Y", "A2"}));
  EXPECT_EQ(handoffs, 0);
}

}  // namespace
}  // namespace braid::test
