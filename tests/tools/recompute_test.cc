// RecomputeInBackward (runtime/models/recompute.h): which patterns and Convs it rewrites and
// which it must leave alone, that a recomputed ResNet trains to the same parameters, that the
// planned arena shrinks, and BuildTrainingNetsWithinArena's choice for a budget
// (runtime/models/training_footprint.h).
#include "runtime/models/recompute.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "runtime/core/workspace.h"
#include "runtime/exec/memory_planning.h"
#include "runtime/exec/net.h"
#include "runtime/models/data_parallel.h"
#include "runtime/models/model_builder.h"
#include "runtime/models/resnet.h"
#include "runtime/models/training_footprint.h"
#include "runtime/models/training_nets.h"
#include "testing/net_text.h"
#include "tests/tools/small_resnet.h"

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
  ASSERT_EQ(RecomputeInBackward(&net, 5, {}).bn_relu, 1);
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

// The Conv before the BN runs again just before the recomputed Relu output's op, its first
// backward reader, which reads the recomputed X instead; the forward Conv's X dies there.
TEST(RecomputeTest, ARecomputedConvRunsJustBeforeItsOutputsFirstBackwardReader) {
  NetDef net = Layer();
  const RecomputeCount count = RecomputeInBackward(&net, 5, {.conv_outputs = {"x", "z"}});
  EXPECT_EQ(count.bn_relu, 1);
  EXPECT_EQ(count.convs, 1);  // z has no backward reader (the loss copy is forward)
  ASSERT_EQ(net.op_size(), 10);
  const OperatorDef& conv = net.op(6);
  EXPECT_EQ(conv.type(), "Conv");
  EXPECT_EQ(std::vector<std::string>(conv.input().begin(), conv.input().end()),
            (std::vector<std::string>{"data", "w1"}));
  EXPECT_EQ(conv.output(0), "x_recomputed");
  ASSERT_EQ(conv.control_input_size(), 1);
  EXPECT_EQ(conv.control_input(0), "z_grad");
  EXPECT_EQ(net.op(7).type(), "SpatialBNApply");
  EXPECT_EQ(net.op(7).input(0), "x_recomputed");
  EXPECT_EQ(net.op(1).input(0), "x");  // the forward BN keeps x
  EXPECT_EQ(RecomputableConvs(Layer(), 5, {{"w1", {DType::kFloat32, {4, 3, 3, 3}, true}},
                                          {"w2", {DType::kFloat32, {4, 4, 1, 1}, true}}}),
            std::vector<std::string>{});  // x is read by the forward BN only before rewriting
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
    EXPECT_EQ(RecomputeInBackward(&net, c.first_backward, {}).bn_relu, 0) << c.why;
    EXPECT_EQ(CountType(net, "SpatialBNApply"), 0) << c.why;
  }
}

// Every trained parameter of `nets` in `a` and `b` equal within training's rounding.
void ExpectSameParameters(const TrainingNets& nets, const Workspace& a, const Workspace& b) {
  for (const auto& param : nets.params.params) {
    const Tensor* x = a.GetBlob(param.name);
    const Tensor* y = b.GetBlob(param.name);
    ASSERT_EQ(x->shape(), y->shape()) << param.name;
    for (int64_t i = 0; i < x->numel(); ++i) {
      const float u = x->data<float>()[i], v = y->data<float>()[i];
      ASSERT_NEAR(u, v, 1e-4f + 1e-3f * std::fabs(u)) << param.name << "[" << i << "]";
    }
  }
}

void OnDag(TrainingNets* nets) {
  nets->train.set_type("dag");
  nets->test.set_type("dag");
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
  ExpectSameParameters(plain, a, b);
}

// As many Convs recomputed as lower the arena (a budget of one byte), on top of the BN + Relu
// outputs: the same training (a recomputed Conv reads its input recomputed just before it), in a
// smaller arena. Recomputing every Conv would not be smaller: each one's input would be rebuilt
// from the one before, back to the images, all at the start of the backward pass.
TEST(RecomputeTest, ResNetWithConvsRecomputedTrainsToTheSameParametersInLessMemory) {
  const TrainingNets plain = SmallResNet(true);
  // The stem, 18 block convs and 2 projections; the stem's 1-channel 3x3 filter is the cheapest
  // per byte.
  ASSERT_EQ(plain.recomputable_convs.size(), 21u);
  EXPECT_EQ(plain.recomputable_convs[0], "conv1");
  RecomputeBudgetReport least;
  const TrainingNets recomputed = BuildTrainingNetsWithinArena(SmallResNetSpec(), 1, OnDag, &least);
  EXPECT_FALSE(least.met);
  EXPECT_GT(least.convs, 0);
  EXPECT_EQ(recomputed.recomputed.convs, least.convs);
  EXPECT_EQ(recomputed.recomputed.bn_relu, plain.recomputed.bn_relu);
  // Basic blocks of 3x3 Convs on 8x8 images: little to gain (~5%); see the ResNet-50 test below.
  EXPECT_LT(least.arena_bytes, least.arena_without_bytes * 0.98)
      << least.arena_bytes << " of " << least.arena_without_bytes;
  TrainingNetsSpec every = SmallResNetSpec();
  every.recompute_convs = {plain.recomputable_convs.begin(), plain.recomputable_convs.end()};
  TrainingNets all = BuildTrainingNets(every);
  all.train.set_type("dag");
  EXPECT_GT(LargestTrainArenaBytes(all), least.arena_bytes);
  Workspace a, b;
  ASSERT_TRUE(a.RunNetOnce(plain.params.init_net).ok());
  ASSERT_TRUE(b.RunNetOnce(recomputed.params.init_net).ok());
  Net* net_a = a.CreateNet(plain.train);
  Net* net_b = b.CreateNet(recomputed.train);
  // Planned as the TrainingLoop plans it, proven, and with every recycled blob poisoned between
  // its lives: a recomputation run early or reading a dead blob would show.
  MemoryPlanOptions options = TrainNetPlanOptions(recomputed);
  options.verify = true;
  options.poison = true;
  const std::unique_ptr<NetMemory> memory = PlanNetMemory(*net_b, &b, options);
  for (int step = 0; step < 5; ++step) {
    ASSERT_TRUE(net_a->Run().ok());
    ASSERT_TRUE(net_b->Run().ok());
  }
  ExpectSameParameters(plain, a, b);
}

// Data parallel: the budget is each device's. Each of two devices plans less than one device
// alone (half the activations, all the parameter gradients), so a budget between the two is met
// with no Conv recomputed.
TEST(RecomputeTest, OnTwoDevicesTheBudgetIsEachDevicesArena) {
  const TrainingNetsSpec spec = SmallResNetSpec();
  const auto two_devices = [](TrainingNets* nets) {
    DeviceOption cpu1;
    cpu1.set_device_id(1);
    *nets = ReplicateForDevices(*nets, {DeviceOption(), cpu1});
    OnDag(nets);
  };
  RecomputeBudgetReport one, two;
  BuildTrainingNetsWithinArena(spec, int64_t{1} << 40, OnDag, &one);
  const TrainingNets nets = BuildTrainingNetsWithinArena(spec, int64_t{1} << 40, two_devices, &two);
  ASSERT_EQ(nets.num_devices(), 2);
  ASSERT_LT(two.arena_without_bytes, one.arena_without_bytes);
  const int64_t budget = (one.arena_without_bytes + two.arena_without_bytes) / 2;
  RecomputeBudgetReport r;
  BuildTrainingNetsWithinArena(spec, budget, two_devices, &r);
  EXPECT_TRUE(r.met);
  EXPECT_EQ(r.convs, 0);
  BuildTrainingNetsWithinArena(spec, budget, OnDag, &r);
  EXPECT_GT(r.convs, 0);  // one device holds more
}

// X = Conv(data, w1), read in the backward pass by a gradient op (from op #3 on); `extra` adds
// ops, `conv_args` arguments of the Conv.
NetDef ConvLayer(const std::string& extra = "", const std::string& conv_args = "",
                 const std::string& backward_reader =
                     R"(op { type: "ReluGradient" input: "x" input: "r_grad" output: "x_grad" })") {
  return NetFromText(R"(name: "conv"
    op { type: "Conv" input: "data" input: "w1" output: "x" )" + conv_args + R"( }
    op { type: "Relu" input: "x" output: "r" }
    op { type: "Copy" input: "r" output: "loss" })" + extra + R"(
    op { type: "Copy" input: "loss" output: "r_grad" })" + backward_reader);
}

TEST(RecomputeTest, LeavesAloneEveryConvItCannotRecomputeFaithfully) {
  {
    NetDef net = ConvLayer();
    EXPECT_EQ(RecomputeInBackward(&net, 3, {.bn_relu = false, .conv_outputs = {"x"}}).convs, 1);
    EXPECT_EQ(net.op(4).output(0), "x_recomputed");
    EXPECT_EQ(net.op(5).input(0), "x_recomputed");
  }
  struct Case {
    const char* why;
    NetDef net;
    int first_backward = 3;
  };
  const Case cases[] = {
      {"a fused epilogue", ConvLayer("", R"(arg { name: "fused_activation" s: "Relu" })")},
      {"its input written between",
       ConvLayer(R"(op { type: "Copy" input: "loss" output: "data" })"), 4},
      {"its filter written between",
       ConvLayer(R"(op { type: "Copy" input: "loss" output: "w1" })"), 4},
      {"X written again", ConvLayer(R"(op { type: "Copy" input: "r" output: "x" })"), 4},
      {"X a backward control input",
       ConvLayer("", "",
                 R"(op { type: "Copy" input: "r_grad" output: "z" control_input: "x" }
                    op { type: "ReluGradient" input: "x" input: "r_grad" output: "x_grad" })")},
      {"no gradient to wait for",
       ConvLayer("", "", R"(op { type: "Copy" input: "x" output: "x_copy" })")},
  };
  for (const Case& c : cases) {
    NetDef net = c.net;
    EXPECT_EQ(RecomputeInBackward(&net, c.first_backward, {.bn_relu = false,
                                                            .conv_outputs = {"x"}})
                  .convs,
              0)
        << c.why;
    EXPECT_EQ(net.DebugString(), c.net.DebugString()) << c.why;
  }
}

// Bottleneck blocks, planned only (nothing allocated): ResNet-50 at batch 32 on 224x224 images
// plans a 1.7 GiB arena with the BN + Relu recomputation alone; a budget of 1.2 GiB is met by
// recomputing a few of the 4x-wide expansions and projections (1x1 Convs, the cheapest per byte)
// from the middle BN inputs.
TEST(RecomputeTest, ResNet50AtBatch32FitsA1Point2GiBArenaWithAFewConvsRecomputed) {
  const TrainingNetsSpec spec =
      SyntheticResNetSpec("resnet50", "resnet50", {32, 3, 224, 1000, /*examples=*/32}, 0.1f);
  const int64_t budget = (int64_t{12} << 30) / 10;  // 1.2 GiB
  RecomputeBudgetReport within;
  BuildTrainingNetsWithinArena(spec, budget, nullptr, &within);
  EXPECT_EQ(within.candidates, 53);
  EXPECT_GT(within.arena_without_bytes, (int64_t{16} << 30) / 10);
  EXPECT_TRUE(within.met);
  EXPECT_LE(within.arena_bytes, budget);
  EXPECT_LE(within.convs, 10);
}

// Within a budget between the least arena and none: met, with fewer Convs; none for a budget met
// already, and none for a budget of 0.
TEST(RecomputeTest, ABudgetRecomputesConvsUntilTheArenaIsWithinIt) {
  const TrainingNetsSpec spec = SmallResNetSpec();
  RecomputeBudgetReport none, zero, least;
  BuildTrainingNetsWithinArena(spec, int64_t{1} << 40, OnDag, &none);
  EXPECT_TRUE(none.met);
  EXPECT_EQ(none.convs, 0);
  EXPECT_EQ(none.arena_bytes, none.arena_without_bytes);
  BuildTrainingNetsWithinArena(spec, 0, OnDag, &zero);
  EXPECT_EQ(zero.convs, 0);
  BuildTrainingNetsWithinArena(spec, 1, OnDag, &least);
  ASSERT_LT(least.arena_bytes, least.arena_without_bytes);

  const int64_t budget = (least.arena_bytes + least.arena_without_bytes) / 2;
  RecomputeBudgetReport half;
  const TrainingNets nets = BuildTrainingNetsWithinArena(spec, budget, OnDag, &half);
  EXPECT_TRUE(half.met);
  EXPECT_LE(half.arena_bytes, budget);
  EXPECT_EQ(half.arena_bytes, LargestTrainArenaBytes(nets));
  EXPECT_GT(half.convs, 0);
  EXPECT_LT(half.convs, least.convs);
  EXPECT_EQ(nets.train.type(), "dag");
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
