// RecomputeBnReluInBackward (runtime/models/recompute.h): which patterns it rewrites and which it
// must leave alone, that a recomputed ResNet trains to the same parameters, and that the planned
// arena shrinks.
#include "runtime/models/recompute.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/memory_planning.h"
#include "runtime/net.h"
#include "runtime/workspace.h"
#include "testing/net_text.h"
#include "tests/tools/small_resnet.h"
#include "runtime/models/model_builder.h"
#include "runtime/models/resnet.h"
#include "runtime/models/training_nets.h"

namespace braid {
namespace {

using ::braid::testing::NetFromText;

// conv -> bn -> relu -> conv, a loss stand-in, then (from op #5 on) a gradient stand-in and the
// backward ops that read r. `bn_out` and `extra` vary the pattern.
NetDef Layer(const std::string& bn_out = "y", const std::string& extra = "") {
  return NetFromText(R"(name: "layer"
    op { type: "Conv" input: "data" input: "w1" output: "x" }
    op { type: "SpatialBN" input: "x" input: "s" input: "b" input: "rm" input: "rv"
         output: ")" + bn_out + R"(" output: "rm" output: "rv" output: "sm" output: "siv" }
    op { type: "Relu" input: ")" + bn_out + R"(" output: "r" }
    op { type: "Conv" input: "r" input: "w2" output: "z" }
    op { type: "Copy" input: "z" output: "loss" }
    op { type: "Copy" input: "loss" output: "z_grad" }
    op { type: "ConvGradient" input: "r" input: "w2" input: "z_grad" output: "w2_grad"
         output: "r_grad" }
    op { type: "ReluGradient" input: "r" input: "r_grad" output: "y_grad" })" + extra);
}

int CountType(const NetDef& net, const std::string& type) {
  return static_cast<int>(std::count_if(net.op().begin(), net.op().end(),
                                        [&](const OperatorDef& op) { return op.type() == type; }));
}

TEST(RecomputeTest, BackwardReadersOfTheReluOutputReadARecomputedCopy) {
  NetDef net = Layer();
  ASSERT_EQ(RecomputeBnReluInBackward(&net, 5), 1);
  ASSERT_EQ(net.op_size(), 9);
  const OperatorDef& apply = net.op(6);  // just before the first backward reader
  EXPECT_EQ(apply.type(), "SpatialBNApply");
  EXPECT_EQ(std::vector<std::string>(apply.input().begin(), apply.input().end()),
            (std::vector<std::string>{"x", "s", "b", "sm", "siv"}));
  EXPECT_EQ(apply.output(0), "r_recomputed");
  // Not before the reader's gradient exists, whatever order the dag executor picks.
  ASSERT_EQ(apply.control_input_size(), 1);
  EXPECT_EQ(apply.control_input(0), "z_grad");
  EXPECT_EQ(net.op(7).input(0), "r_recomputed");  // ConvGradient
  EXPECT_EQ(net.op(8).input(0), "r_recomputed");  // ReluGradient
  EXPECT_EQ(net.op(3).input(0), "r");             // the forward reader keeps r
}

TEST(RecomputeTest, LeavesAloneWhatWouldNotRecomputeTheSameValues) {
  struct Case {
    const char* why;
    NetDef net;
    int first_backward = 5;
  };
  const Case cases[] = {
      {"BN in place: X is gone", Layer("x")},
      {"Y has another reader",
       Layer("y", R"(op { type: "Copy" input: "y" output: "y_copy" })")},
      {"r written again later", Layer("y", R"(op { type: "Copy" input: "z" output: "r" })")},
      {"X written before the backward reader",
       NetFromText(R"(name: "layer"
         op { type: "SpatialBN" input: "x" input: "s" input: "b" input: "rm" input: "rv"
              output: "y" output: "rm" output: "rv" output: "sm" output: "siv" }
         op { type: "Relu" input: "y" output: "r" }
         op { type: "Copy" input: "r" output: "x" }
         op { type: "ReluGradient" input: "r" input: "x" output: "y_grad" })"),
       3},
      {"inference BN",
       NetFromText(R"(name: "layer"
         op { type: "SpatialBN" input: "x" input: "s" input: "b" input: "rm" input: "rv"
              output: "y" arg { name: "is_test" i: 1 } }
         op { type: "Relu" input: "y" output: "r" }
         op { type: "ReluGradient" input: "r" input: "r" output: "y_grad" })"),
       2},
  };
  for (const Case& c : cases) {
    NetDef net = c.net;
    EXPECT_EQ(RecomputeBnReluInBackward(&net, c.first_backward), 0) << c.why;
    EXPECT_EQ(CountType(net, "SpatialBNApply"), 0) << c.why;
  }
}

TrainingNets SmallResNet(bool recompute) {
  TrainingNetsSpec spec = SmallResNetSpec();
  spec.recompute_bn_relu = recompute;
  return BuildTrainingNets(spec);
}

TEST(RecomputeTest, ResNetTrainsToTheSameParametersAndBlockOutputsAreRecomputedToo) {
  const TrainingNets plain = SmallResNet(false), recomputed = SmallResNet(true);
  // The stem and each block's first conv-BN-Relu (1 + 9), and the 9 block outputs but the two
  // whose projection shortcut is computed after their BN (left alone, see recompute.h).
  EXPECT_EQ(CountType(recomputed.train, "SpatialBNApply"), 1 + 9 + 7);
  Workspace a, b;
  ASSERT_TRUE(a.RunNetOnce(plain.params.init_net).ok());
  ASSERT_TRUE(b.RunNetOnce(recomputed.params.init_net).ok());
  Net* net_a = a.CreateNet(plain.train);
  Net* net_b = b.CreateNet(recomputed.train);
  for (int step = 0; step < 5; ++step) {
    ASSERT_TRUE(net_a->Run().ok());
    ASSERT_TRUE(net_b->Run().ok());
  }
  for (const auto& param : plain.params.params) {
    const Tensor* x = a.GetBlob(param.name);
    const Tensor* y = b.GetBlob(param.name);
    ASSERT_EQ(x->shape(), y->shape()) << param.name;
    for (int64_t i = 0; i < x->numel(); ++i) {
      const float u = x->data<float>()[i], v = y->data<float>()[i];
      ASSERT_NEAR(u, v, 1e-4f + 1e-3f * std::fabs(u)) << param.name << "[" << i << "]";
    }
  }
}

// On dag too: the recomputation's control input keeps the executor (and so the planner) from
// running it early, when its data inputs already exist.
TEST(RecomputeTest, ThePlannedArenaShrinksOnBothExecutors) {
  for (const char* executor : {"simple", "dag"}) {
    int64_t arena[2];
    for (bool recompute : {false, true}) {
      TrainingNets nets = SmallResNet(recompute);
      nets.train.set_type(executor);
      Workspace ws;
      ASSERT_TRUE(ws.RunNetOnce(nets.params.init_net).ok());
      Net* net = ws.CreateNet(nets.train);
      MemoryPlanOptions options;
      options.mode = PlanMode::kTraining;
      options.share_activations = true;
      options.keep = {nets.loss, nets.accuracy, nets.lr, nets.iter};
      options.verify = true;
      arena[recompute] = static_cast<int64_t>(PlanNetMemory(*net, &ws, options)->allocated_bytes());
      ASSERT_TRUE(net->Run().ok());
    }
    EXPECT_LT(arena[1], arena[0] * 0.9) << executor;
  }
}

}  // namespace
}  // namespace braid
