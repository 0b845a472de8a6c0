// FuseConvActivation (runtime/models/fuse_conv_activation.h) with Conv's fused_activation
// (ops/nn/conv_op.h): which Relu and Clip ops an inference net's loader gives to the Conv before
// them, that the fused net computes what the unfused one does, in either layout, and that a fused
// Conv has no gradient.
#include "runtime/models/fuse_conv_activation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ops/nn/dnnl_util.h"
#include "ops/op_test_util.h"
#include "runtime/core/argument.h"
#include "runtime/core/autodiff.h"
#include "runtime/core/workspace.h"

namespace braid::test {
namespace {

void FeedConvs(Workspace* ws) {
  Feed<float>(ws, "X", {2, 16, 9, 9}, UniformFloats(2 * 16 * 81, 1));
  Feed<float>(ws, "W1", {16, 16, 3, 3}, UniformFloats(16 * 16 * 9, 2));
  Feed<float>(ws, "b1", {16}, UniformFloats(16, 3));
  Feed<float>(ws, "W2", {32, 16, 1, 1}, UniformFloats(32 * 16, 4));
}

const char kConv1[] =
    "type: 'Conv' input: 'X' input: 'W1' input: 'b1' output: 'x1' arg { name: 'pad' i: 1 }";

// Conv + bias -> Relu -> 1x1 Conv -> ReLU6-like Clip in place -> out.
NetDef TwoLayers() {
  NetDef net = NetOf({kConv1, "type: 'Relu' input: 'x1' output: 'r1'",
                      "type: 'Conv' input: 'r1' input: 'W2' output: 'x2'",
                      "type: 'Clip' input: 'x2' output: 'x2' arg { name: 'min' f: 0 } "
                      "arg { name: 'max' f: 0.5 }",
                      "type: 'Copy' input: 'x2' output: 'out'"});
  net.add_external_output("out");
  return net;
}

TEST(FuseConvActivationTest, GivesEachReluAndClipToItsConvAndComputesTheSameOutput) {
  Workspace plain;
  FeedConvs(&plain);
  ASSERT_TRUE(plain.RunNetOnce(TwoLayers()).ok());
  const std::vector<float> want = Fetch<float>(plain, "out");
  ASSERT_TRUE(std::any_of(want.begin(), want.end(), [](float v) { return v == 0.f; }));

  NetDef net = TwoLayers();
  EXPECT_EQ(FuseConvActivation(&net), 2);
  EXPECT_EQ(OpTypes(net), (std::vector<std::string>{"Conv", "Conv", "Copy"}));
  EXPECT_EQ(net.op(0).output(0), "r1");
  EXPECT_EQ(net.op(1).output(0), "x2");
  Workspace ws;
  FeedConvs(&ws);
  ASSERT_TRUE(ws.RunNetOnce(net).ok());
  ExpectCloseToScale(Fetch<float>(ws, "out"), want);
  for (float v : Fetch<float>(ws, "r1")) ASSERT_GE(v, 0.f);
  const std::vector<float> out = Fetch<float>(ws, "out");
  EXPECT_EQ(*std::max_element(out.begin(), out.end()), 0.5f);  // the clip ran
  EXPECT_EQ(ArgumentReader(net.op(1).arg()).Get<std::string>("fused_activation", ""), "Clip");
}

// The fused ReLU is applied before the reorder out of the primitive's layout: a blocked Y holds
// what the unfused Conv and Relu compute.
TEST(FuseConvActivationTest, AFusedConvWritesEitherLayoutWithTheUnfusedValues) {
  if (NativeChannelBlock() == 0) GTEST_SKIP() << "no blocked layout on this CPU";
  Workspace unfused;
  FeedConvs(&unfused);
  ASSERT_TRUE(unfused.RunNetOnce(NetOf({kConv1, "type: 'Relu' input: 'x1' output: 'y'"})).ok());
  const std::vector<float> want = Fetch<float>(unfused, "y");
  ASSERT_TRUE(std::any_of(want.begin(), want.end(), [](float v) { return v == 0.f; }));
  const std::string fused = std::string(kConv1) + " arg { name: 'fused_activation' s: 'Relu' }";
  const std::string blocked =
      fused + " arg { name: 'blocked_outputs' ints: 0 } " +
      "arg { name: 'channel_block' i: " + std::to_string(NativeChannelBlock()) + " }";
  for (const std::string& conv : {fused, blocked}) {
    Workspace ws;
    FeedConvs(&ws);
    // MaxPool with a 1x1 window reads Y in either layout and writes it plain: the identity.
    ASSERT_TRUE(ws.RunNetOnce(NetOf({conv,
                                     "type: 'MaxPool' input: 'x1' output: 'y' "
                                     "arg { name: 'kernel' i: 1 }"}))
                    .ok());
    ExpectCloseToScale(Fetch<float>(ws, "y"), want);
  }
}

// An in-place Relu followed by other in-place writers of its blob (a Caffe2 builder's style): the
// Conv writes it, and the later writers see what they saw.
TEST(FuseConvActivationTest, AnInPlaceActivationFollowedByInPlaceWritersIsFused) {
  NetDef net = NetOf({kConv1, "type: 'Relu' input: 'x1' output: 'x1'",
                      "type: 'Sigmoid' input: 'x1' output: 'x1'",
                      "type: 'Copy' input: 'x1' output: 'out'"});
  net.add_external_output("out");
  Workspace plain;
  FeedConvs(&plain);
  ASSERT_TRUE(plain.RunNetOnce(net).ok());
  EXPECT_EQ(FuseConvActivation(&net), 1);
  EXPECT_EQ(OpTypes(net), (std::vector<std::string>{"Conv", "Sigmoid", "Copy"}));
  Workspace ws;
  FeedConvs(&ws);
  ASSERT_TRUE(ws.RunNetOnce(net).ok());
  ExpectCloseToScale(Fetch<float>(ws, "out"), Fetch<float>(plain, "out"));
}

TEST(FuseConvActivationTest, LeavesEveryActivationItCannotFuseAsItIs) {
  ExpectLeftAlone(FuseConvActivation, {
      {"X read by another op",
       {kConv1, "type: 'Relu' input: 'x1' output: 'r'", "type: 'Sigmoid' input: 'x1' output: 's'"},
       {"r", "s"}},
      {"X fetched", {kConv1, "type: 'Relu' input: 'x1' output: 'r'"}, {"r", "x1"}},
      {"Y read between the two",
       {"type: 'Copy' input: 'X' output: 'r'", kConv1, "type: 'Sigmoid' input: 'r' output: 's'",
        "type: 'Relu' input: 'x1' output: 'r'"},
       {"r", "s"}},
      {"a Sum between",
       {kConv1, "type: 'Sum' input: 'x1' input: 'X' output: 'x1'",
        "type: 'Relu' input: 'x1' output: 'r'"},
       {"r"}},
      {"on CUDA",
       {std::string(kConv1) + " device_option { device_type: 1 }",
        "type: 'Relu' input: 'x1' output: 'r'"},
       {"r"}},
      {"Y is the Conv's input",
       {"type: 'Conv' input: 'r' input: 'W1' input: 'b1' output: 'x1'",
        "type: 'Relu' input: 'x1' output: 'r'"},
       {"r"}},
      {"X a control input",
       {kConv1, "type: 'Relu' input: 'x1' output: 'r'",
        "type: 'Copy' input: 'r' output: 's' control_input: 'x1'"},
       {"s"}},
      {"a writer of X before the in-place activation",
       {kConv1, "type: 'Sigmoid' input: 'x1' output: 'x1'",
        "type: 'Relu' input: 'x1' output: 'x1'"},
       {"x1"}},
      {"an activation with a control input",
       {kConv1, "type: 'Copy' input: 'X' output: 'z'",
        "type: 'Relu' input: 'x1' output: 'r' control_input: 'z'"},
       {"r", "z"}},
      {"already fused",
       {std::string(kConv1) + " arg { name: 'fused_activation' s: 'Relu' }",
        "type: 'Relu' input: 'x1' output: 'r'"},
       {"r"}},
  });
}

TEST(FuseConvActivationTest, AFusedConvHasNoGradient) {
  NetDef net =
      NetOf({std::string(kConv1) + " name: 'c1' arg { name: 'fused_activation' s: 'Relu' }",
             "type: 'AveragedLoss' input: 'x1' output: 'loss'"});
  try {
    AddGradientOperators(&net, {"loss"});
    ADD_FAILURE() << "a gradient for a fused Conv";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Conv 'c1' has fused_sum or fused_activation"),
              std::string::npos)
        << e.what();
  }
}

TEST(FuseConvActivationTest, AnUnknownFusedActivationIsAnErrorNamingTheOp) {
  Workspace ws;
  FeedConvs(&ws);
  const std::string error = RunOpError(
      &ws, std::string(kConv1) + " name: 'c' arg { name: 'fused_activation' s: 'Tanh' }");
  EXPECT_NE(error.find("fused_activation is 'Tanh'; it takes Relu or Clip"), std::string::npos)
      << error;
}

}  // namespace
}  // namespace braid::test
