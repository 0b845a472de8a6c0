// UseBlockedLayouts (runtime/models/blocked_layouts.h): which blobs it keeps blocked and which it
// must leave plain, that it replaces earlier decisions, and that a rewritten net builds and
// computes what the plain net computes, forward and backward.
#include "runtime/models/blocked_layouts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ops/nn/dnnl_util.h"
#include "runtime/core/argument.h"
#include "runtime/core/autodiff.h"
#include "runtime/core/shape_inference.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/memory_planning.h"
#include "runtime/exec/net.h"
#include "runtime/models/data_parallel.h"
#include "runtime/models/resnet.h"
#include "runtime/models/training_nets.h"
#include "testing/net_text.h"
#include "tests/tools/small_resnet.h"

namespace braid {
namespace {

using ::braid::testing::NetFromText;

using Shapes = std::map<std::string, ShapeInfo>;

Shapes Float32Shapes(const std::map<std::string, std::vector<int64_t>>& dims) {
  Shapes shapes;
  for (const auto& [name, d] : dims) shapes[name] = ShapeInfo{DType::kFloat32, d, true};
  return shapes;
}

// The kBlockedOutputsArg values of `op`, and how many such arguments it has.
std::vector<int64_t> BlockedOutputs(const OperatorDef& op) {
  return ArgumentReader(op.arg()).GetList<int64_t>(kBlockedOutputsArg);
}

// The block the nn ops ask for on this CPU (16 on AVX-512, 8 on AVX2), and its layout.
int64_t Block() { return NativeChannelBlock(); }
Layout Blocked() { return BlockedLayout(Block()); }

constexpr char kWhyNothingIsBlocked[] =
    "oneDNN's convolutions on this CPU choose no channel-blocked layout (NativeChannelBlock() is "
    "0), "
    "so UseBlockedLayouts blocks nothing, as it should";

int CountBlockedOutputsArgs(const OperatorDef& op) {
  return static_cast<int>(std::count_if(op.arg().begin(), op.arg().end(), [](const Argument& a) {
    return a.name() == kBlockedOutputsArg;
  }));
}

// data -> Conv -> x -> SpatialBN (inference) -> y -> Relu -> r -> Conv -> out, 16 channels.
const char kChain[] = R"(name: "chain"
  external_input: "data" external_input: "w1" external_input: "w2"
  external_input: "s" external_input: "b" external_input: "m" external_input: "v"
  external_output: "out"
  op { type: "Conv" input: "data" input: "w1" output: "x" arg { name: "pad" i: 1 } }
  op { type: "SpatialBN" input: "x" input: "s" input: "b" input: "m" input: "v" output: "y"
       arg { name: "is_test" i: 1 } }
  op { type: "Relu" input: "y" output: "r" }
  op { type: "Conv" input: "r" input: "w2" output: "out" arg { name: "pad" i: 1 } })";

Shapes ChainShapes(int64_t channels = 16) {
  const int64_t c = channels;
  Shapes shapes = Float32Shapes({{"data", {2, c, 8, 8}}, {"w1", {c, c, 3, 3}}});
  shapes["w2"] = shapes["w1"];
  for (const char* name : {"s", "b", "m", "v"}) {
    shapes[name] = ShapeInfo{DType::kFloat32, {c}, true};
  }
  return shapes;
}

TEST(BlockedLayoutsTest, ActivationsBetweenConvBnAndReluAreBlocked) {
  if (Block() == 0) GTEST_SKIP() << kWhyNothingIsBlocked;
  NetDef net = NetFromText(kChain);
  EXPECT_EQ(UseBlockedLayouts(&net, ChainShapes()), 3);             // x, y, r
  EXPECT_EQ(BlockedOutputs(net.op(0)), (std::vector<int64_t>{0}));  // Conv -> x
  EXPECT_EQ(BlockedOutputs(net.op(1)), (std::vector<int64_t>{0}));  // SpatialBN -> y
  EXPECT_EQ(CountBlockedOutputsArgs(net.op(2)), 0);                 // Relu: r follows y
  EXPECT_EQ(CountBlockedOutputsArgs(net.op(3)), 0);                 // out is an external output
}

TEST(BlockedLayoutsTest, ASumAndReluOfBlockedBlobsAreBlocked) {
  if (Block() == 0) GTEST_SKIP() << kWhyNothingIsBlocked;
  // A ResNet block's output: conv + shortcut conv, Relu. The control input orders only.
  NetDef net = NetFromText(R"(name: "residual"
    external_output: "out"
    op { type: "Conv" input: "data" input: "w1" output: "x1" arg { name: "pad" i: 1 } }
    op { type: "Conv" input: "data" input: "w2" output: "x2" arg { name: "pad" i: 1 } }
    op { type: "Sum" input: "x1" input: "x2" output: "x12" }
    op { type: "Relu" input: "x12" output: "x12" }
    op { type: "Conv" input: "x12" input: "w1" output: "out" control_input: "x1"
         arg { name: "pad" i: 1 } })");
  EXPECT_EQ(UseBlockedLayouts(&net, ChainShapes()), 3);  // x1, x2, x12
  EXPECT_EQ(BlockedOutputs(net.op(0)), (std::vector<int64_t>{0}));
  EXPECT_EQ(BlockedOutputs(net.op(1)), (std::vector<int64_t>{0}));
  EXPECT_EQ(CountBlockedOutputsArgs(net.op(2)), 0);
  EXPECT_EQ(CountBlockedOutputsArgs(net.op(3)), 0);
  EXPECT_EQ(CountBlockedOutputsArgs(net.op(4)), 0);
}

TEST(BlockedLayoutsTest, AnInceptionConcatAlongTheChannelsIsBlocked) {
  if (Block() == 0) GTEST_SKIP() << kWhyNothingIsBlocked;
  NetDef net = NetFromText(R"(name: "inception"
    external_output: "out" external_output: "flat"
    op { type: "Conv" input: "data" input: "w1" output: "x1" arg { name: "pad" i: 1 } }
    op { type: "Conv" input: "data" input: "w2" output: "x2" arg { name: "pad" i: 1 } }
    op { type: "Concat" input: "x1" input: "x2" output: "cat" output: "split" }
    op { type: "MaxPool" input: "cat" output: "out" arg { name: "kernel" i: 2 } }
    op { type: "Concat" input: "x1" input: "x2" output: "wide" output: "split2"
         arg { name: "axis" i: 3 } }
    op { type: "Flatten" input: "wide" output: "flat" })");
  // x1 and x2 feed the axis-3 Concat too, whose ports are none: only cat is blocked.
  EXPECT_EQ(UseBlockedLayouts(&net, ChainShapes()), 1);
  EXPECT_EQ(BlockedOutputs(net.op(2)), (std::vector<int64_t>{0}));
  EXPECT_EQ(CountBlockedOutputsArgs(net.op(0)), 0);
  net.mutable_op()->DeleteSubrange(4, 2);  // without the other Concat, its inputs are blocked too
  net.clear_external_output();
  net.add_external_output("out");
  EXPECT_EQ(UseBlockedLayouts(&net, ChainShapes()), 3);
  EXPECT_EQ(BlockedOutputs(net.op(0)), (std::vector<int64_t>{0}));
}

TEST(BlockedLayoutsTest, ExternalBlobsStayPlainEvenWhenWrittenAtPorts) {
  if (Block() == 0) GTEST_SKIP() << kWhyNothingIsBlocked;
  // x is fetched by the caller; h is fed by the caller and overwritten.
  NetDef net = NetFromText(R"(name: "external"
    external_input: "data" external_input: "w1" external_input: "w2" external_input: "h"
    external_output: "x" external_output: "out"
    op { type: "Conv" input: "data" input: "w1" output: "x" arg { name: "pad" i: 1 } }
    op { type: "Relu" input: "x" output: "r" }
    op { type: "Conv" input: "r" input: "w2" output: "h" arg { name: "pad" i: 1 } }
    op { type: "Conv" input: "h" input: "w2" output: "out" arg { name: "pad" i: 1 } })");
  Shapes known = ChainShapes();
  known["h"] = known["data"];
  EXPECT_EQ(UseBlockedLayouts(&net, known), 0);
  for (const OperatorDef& op : net.op()) EXPECT_EQ(CountBlockedOutputsArgs(op), 0) << op.type();
}

TEST(BlockedLayoutsTest, AReaderWithoutPortsKeepsEverythingItsElementwiseOpsTouchPlain) {
  if (Block() == 0) GTEST_SKIP() << kWhyNothingIsBlocked;
  // r feeds an FC, so r, and x through the Relu, stay plain.
  NetDef fc = NetFromText(R"(name: "fc"
    op { type: "Conv" input: "data" input: "w1" output: "x" arg { name: "pad" i: 1 } }
    op { type: "Relu" input: "x" output: "r" }
    op { type: "FC" input: "r" input: "fw" input: "fb" output: "out" })");
  Shapes known = ChainShapes();
  known["fw"] = ShapeInfo{DType::kFloat32, {10, 16 * 8 * 8}, true};
  known["fb"] = ShapeInfo{DType::kFloat32, {10}, true};
  EXPECT_EQ(UseBlockedLayouts(&fc, known), 0);
  EXPECT_EQ(CountBlockedOutputsArgs(fc.op(0)), 0);

  // x1 + x2 feeds a Reshape; an unrelated Conv -> Relu -> Conv chain is still blocked.
  NetDef sum = NetFromText(R"(name: "sum"
    external_output: "flat" external_output: "out"
    op { type: "Conv" input: "data" input: "w1" output: "x1" arg { name: "pad" i: 1 } }
    op { type: "Conv" input: "data" input: "w2" output: "x2" arg { name: "pad" i: 1 } }
    op { type: "Sum" input: "x1" input: "x2" output: "x12" }
    op { type: "Reshape" input: "x12" output: "flat" output: "old_shape"
         arg { name: "shape" ints: 2 ints: -1 } }
    op { type: "Conv" input: "data" input: "w1" output: "x3" arg { name: "pad" i: 1 } }
    op { type: "Relu" input: "x3" output: "r3" }
    op { type: "Conv" input: "r3" input: "w2" output: "out" arg { name: "pad" i: 1 } })");
  EXPECT_EQ(UseBlockedLayouts(&sum, ChainShapes()), 2);  // x3, r3
  EXPECT_EQ(CountBlockedOutputsArgs(sum.op(0)), 0);
  EXPECT_EQ(CountBlockedOutputsArgs(sum.op(1)), 0);
  EXPECT_EQ(BlockedOutputs(sum.op(4)), (std::vector<int64_t>{0}));
}

TEST(BlockedLayoutsTest, ChannelsNotAMultipleOfTheBlockStayPlain) {
  if (Block() == 0) GTEST_SKIP() << kWhyNothingIsBlocked;
  NetDef net = NetFromText(kChain);
  EXPECT_EQ(UseBlockedLayouts(&net, ChainShapes(4)), 0);
  for (const OperatorDef& op : net.op()) EXPECT_EQ(CountBlockedOutputsArgs(op), 0) << op.type();
  // 8 channels: one block on AVX2, not a whole one on AVX-512.
  NetDef eight = NetFromText(kChain);
  EXPECT_EQ(UseBlockedLayouts(&eight, ChainShapes(8)), Block() == 8 ? 3 : 0);
}

TEST(BlockedLayoutsTest, TheBlockIsTheOneTheOpsAskForAndIsRecordedBesideTheOutputs) {
  if (Block() == 0) GTEST_SKIP() << kWhyNothingIsBlocked;
  NetDef net = NetFromText(kChain);
  ASSERT_EQ(UseBlockedLayouts(&net, ChainShapes()), 3);
  for (int i : {0, 1}) {
    EXPECT_EQ(ArgumentReader(net.op(i).arg()).Get<int64_t>(kChannelBlockArg, 0), Block()) << i;
  }
  for (int i : {2, 3}) EXPECT_FALSE(ArgumentReader(net.op(i).arg()).Has(kChannelBlockArg)) << i;
}

// Two test schemas whose kernels would work on different blocks: the net takes the first op's, and
// blobs an op of the other block touches stay plain.
BRAID_OPERATOR_SCHEMA(BlockedLayoutsTestBy16)
    .NumInputs(1).NumOutputs(1).IdenticalTypeAndShape().NoArgs()
    .BlockedPorts([](const OperatorDef&) { return OpSchema::LayoutPorts{{0}, {0}, 16}; })
    .SetDoc("Test only: blocked ports by 16 channels.");
BRAID_OPERATOR_SCHEMA(BlockedLayoutsTestBy8)
    .NumInputs(1).NumOutputs(1).IdenticalTypeAndShape().NoArgs()
    .BlockedPorts([](const OperatorDef&) { return OpSchema::LayoutPorts{{0}, {0}, 8}; })
    .SetDoc("Test only: blocked ports by 8 channels.");

TEST(BlockedLayoutsTest, OpsOfAnotherBlockKeepTheirBlobsPlain) {
  NetDef net = NetFromText(R"(name: "mixed"
    external_input: "data" external_output: "out"
    op { type: "BlockedLayoutsTestBy16" input: "data" output: "a" }
    op { type: "BlockedLayoutsTestBy16" input: "a" output: "b" }
    op { type: "BlockedLayoutsTestBy8" input: "b" output: "c" }
    op { type: "BlockedLayoutsTestBy8" input: "c" output: "d" }
    op { type: "BlockedLayoutsTestBy16" input: "d" output: "out" })");
  EXPECT_EQ(UseBlockedLayouts(&net, Float32Shapes({{"data", {2, 16, 4, 4}}})), 1);  // a
  EXPECT_EQ(BlockedOutputs(net.op(0)), (std::vector<int64_t>{0}));
  EXPECT_EQ(ArgumentReader(net.op(0).arg()).Get<int64_t>(kChannelBlockArg, 0), 16);
  for (int i = 1; i < net.op_size(); ++i) EXPECT_EQ(CountBlockedOutputsArgs(net.op(i)), 0) << i;
}

TEST(BlockedLayoutsTest, ABlobUsedAtAPositionThatIsNotAPortStaysPlain) {
  if (Block() == 0) GTEST_SKIP() << kWhyNothingIsBlocked;
  // x [16,16,3,3] is blockable and read by a Conv as its data, but another Conv reads it as its
  // filter, which must be plain.
  NetDef net = NetFromText(R"(name: "filter"
    external_output: "y" external_output: "out"
    op { type: "Conv" input: "big" input: "w1" output: "x" }
    op { type: "Conv" input: "x" input: "w1" output: "y" }
    op { type: "Conv" input: "data" input: "x" output: "out" arg { name: "pad" i: 1 } })");
  Shapes known = ChainShapes();
  known["big"] = ShapeInfo{DType::kFloat32, {16, 16, 5, 5}, true};
  EXPECT_EQ(UseBlockedLayouts(&net, known), 0);
  for (const OperatorDef& op : net.op()) EXPECT_EQ(CountBlockedOutputsArgs(op), 0) << op.type();
}

TEST(BlockedLayoutsTest, ReplacesExistingBlockedOutputsArguments) {
  if (Block() == 0) GTEST_SKIP() << kWhyNothingIsBlocked;
  NetDef net = NetFromText(kChain);
  const auto add_blocked = [](OperatorDef* op, std::vector<int64_t> outputs) {
    Argument* arg = op->add_arg();
    arg->set_name(kBlockedOutputsArg);
    for (int64_t o : outputs) arg->add_ints(o);
  };
  add_blocked(net.mutable_op(0), {0, 3});
  add_blocked(net.mutable_op(0), {0});
  add_blocked(net.mutable_op(2), {0});
  add_blocked(net.mutable_op(3), {0});
  EXPECT_EQ(UseBlockedLayouts(&net, ChainShapes()), 3);
  EXPECT_EQ(CountBlockedOutputsArgs(net.op(0)), 1);
  EXPECT_EQ(BlockedOutputs(net.op(0)), (std::vector<int64_t>{0}));
  EXPECT_EQ(ArgumentReader(net.op(0).arg()).Get<int64_t>("pad", 0), 1);  // other args kept
  EXPECT_EQ(BlockedOutputs(net.op(1)), (std::vector<int64_t>{0}));
  EXPECT_EQ(CountBlockedOutputsArgs(net.op(2)), 0);
  EXPECT_EQ(CountBlockedOutputsArgs(net.op(3)), 0);
}

// Feeds every blob of `shapes` with fixed values (variances positive), as the caller would.
void FeedInputs(const Shapes& shapes, Workspace* ws) {
  int offset = 0;
  for (const auto& [name, shape] : shapes) {
    Tensor* t = ws->CreateBlob(name);
    t->Resize(shape.dtype, shape.dims);
    float* p = t->mutable_data<float>();
    for (int64_t i = 0; i < t->numel(); ++i) {
      p[i] = static_cast<float>((i * 7 + offset) % 23) / 23.f - 0.5f;
      if (name == "v" || name == "rv") p[i] += 1.f;
    }
    offset += 5;
  }
}

// Runs `net` once on fed inputs, with the pass applied or not; the workspace afterwards.
std::unique_ptr<Workspace> RunOnce(NetDef net, const Shapes& inputs, bool blocked,
                                   int* num_blocked = nullptr) {
  auto ws = std::make_unique<Workspace>();
  FeedInputs(inputs, ws.get());
  if (blocked) {
    const int n = UseBlockedLayouts(&net, ShapesOfWorkspaceBlobs(net, *ws));
    if (num_blocked != nullptr) *num_blocked = n;
  }
  Net* created = ws->CreateNet(net);  // verifies every op against its schema
  const Status s = created->Run();
  EXPECT_TRUE(s.ok()) << s.ToString();
  return ws;
}

void ExpectLayout(const Workspace& ws, const std::string& blob, Layout layout) {
  const Tensor* t = ws.GetBlob(blob);
  ASSERT_NE(t, nullptr) << blob;
  EXPECT_STREQ(LayoutName(t->layout()), LayoutName(layout)) << blob;
}

void ExpectSameValues(const Workspace& plain, const Workspace& blocked, const std::string& blob) {
  const Tensor* x = plain.GetBlob(blob);
  const Tensor* y = blocked.GetBlob(blob);
  ASSERT_TRUE(x != nullptr && y != nullptr) << blob;
  ASSERT_EQ(y->layout(), Layout::kPlain) << blob;
  ASSERT_EQ(x->shape(), y->shape()) << blob;
  for (int64_t i = 0; i < x->numel(); ++i) {
    const float u = x->data<float>()[i], v = y->data<float>()[i];
    ASSERT_NEAR(u, v, 1e-5f * std::max(1.f, std::fabs(u))) << blob << "[" << i << "]";
  }
}

TEST(BlockedLayoutsTest, RewrittenInferenceNetBuildsAndComputesTheSameOutput) {
  if (Block() == 0) GTEST_SKIP() << kWhyNothingIsBlocked;
  const NetDef net = NetFromText(kChain);
  int num_blocked = 0;
  const auto plain = RunOnce(net, ChainShapes(), false);
  const auto blocked = RunOnce(net, ChainShapes(), true, &num_blocked);
  EXPECT_EQ(num_blocked, 3);
  for (const char* blob : {"x", "y", "r"}) ExpectLayout(*blocked, blob, Blocked());
  ExpectSameValues(*plain, *blocked, "out");
}

TEST(BlockedLayoutsTest, RewrittenTrainingNetBuildsAndComputesTheSameGradients) {
  if (Block() == 0) GTEST_SKIP() << kWhyNothingIsBlocked;
  NetDef net = NetFromText(R"(name: "train"
    external_input: "data" external_input: "w1" external_input: "w2"
    external_input: "s" external_input: "b" external_input: "rm" external_input: "rv"
    op { type: "Conv" input: "data" input: "w1" output: "x" arg { name: "pad" i: 1 } }
    op { type: "SpatialBN" input: "x" input: "s" input: "b" input: "rm" input: "rv"
         output: "y" output: "rm" output: "rv" output: "sm" output: "siv" }
    op { type: "Relu" input: "y" output: "r" }
    op { type: "Conv" input: "r" input: "w2" output: "out" arg { name: "pad" i: 1 } }
    op { type: "AveragedLoss" input: "out" output: "loss" })");
  AddGradientOperators(&net, {"loss"});
  const std::vector<std::string> fetched = {"loss",   "w1_grad", "w2_grad", "s_grad",
                                            "b_grad", "rm",      "rv"};
  for (const std::string& blob : fetched) net.add_external_output(blob);
  const Shapes inputs = Float32Shapes({{"data", {2, 16, 8, 8}},
                                       {"w1", {16, 16, 3, 3}},
                                       {"w2", {16, 16, 3, 3}},
                                       {"s", {16}},
                                       {"b", {16}},
                                       {"rm", {16}},
                                       {"rv", {16}}});
  int num_blocked = 0;
  const auto plain = RunOnce(net, inputs, false);
  const auto blocked = RunOnce(net, inputs, true, &num_blocked);
  // Forward x, y, r; backward r_grad, y_grad (through ReluGradient), x_grad and data_grad.
  EXPECT_EQ(num_blocked, 7);
  for (const char* blob : {"x", "y", "r", "r_grad", "y_grad", "x_grad", "data_grad"}) {
    ExpectLayout(*blocked, blob, Blocked());
  }
  ExpectLayout(*blocked, "out_grad", Layout::kPlain);  // AveragedLossGradient has no ports
  for (const std::string& blob : fetched) ExpectSameValues(*plain, *blocked, blob);
}

TrainingNets SmallResNet(bool blocked) {
  TrainingNetsSpec spec = SmallResNetSpec();
  spec.blocked_layouts = blocked;
  return BuildTrainingNets(spec);
}

int CountBlockedOutputs(const NetDef& net) {
  int n = 0;
  for (const OperatorDef& op : net.op()) {
    for (const Argument& arg : op.arg()) {
      if (arg.name() == kBlockedOutputsArg) n += arg.ints_size();
    }
  }
  return n;
}

// Trains `nets` 4 steps on the dag executor with 2 workers and a planned arena (recycled blobs
// change layout from one logical blob to the next), runs the test net once, and returns every
// checkpointed blob's values with the test accuracy's.
std::map<std::string, std::vector<float>> TrainPlanned(const TrainingNets& nets) {
  Workspace ws;
  EXPECT_TRUE(ws.RunNetOnce(nets.params.init_net).ok());
  NetDef train = nets.train;
  train.set_type("dag");
  Argument* workers = train.add_arg();
  workers->set_name("num_workers");
  workers->set_i(2);
  Net* net = ws.CreateNet(train);
  MemoryPlanOptions options;
  options.mode = PlanMode::kTraining;
  options.share_activations = true;
  options.keep = {nets.OnDevice(0, nets.loss), nets.OnDevice(0, nets.accuracy),
                  nets.OnDevice(0, nets.lr), nets.OnDevice(0, nets.iter)};
  options.verify = true;
  const std::unique_ptr<NetMemory> memory = PlanNetMemory(*net, &ws, options);
  for (int step = 0; step < 4; ++step) {
    const Status s = net->Run();
    EXPECT_TRUE(s.ok()) << s.message();
  }
  Workspace test_ws(&ws);
  const Status s = test_ws.RunNetOnce(nets.test);
  EXPECT_TRUE(s.ok()) << s.message();
  std::map<std::string, std::vector<float>> values;
  for (const std::string& blob : nets.CheckpointBlobs()) {
    const Tensor* t = ws.GetBlob(blob);
    if (t->dtype() != DType::kFloat32) continue;
    values[blob].assign(t->data<float>(), t->data<float>() + t->numel());
  }
  const Tensor* accuracy = test_ws.GetBlob(nets.OnDevice(0, nets.test_accuracy));
  values["test accuracy"] = {accuracy->data<float>()[0]};
  return values;
}

void ExpectSameTraining(const TrainingNets& plain, const TrainingNets& blocked) {
  const auto want = TrainPlanned(plain), got = TrainPlanned(blocked);
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [blob, values] : want) {
    const std::vector<float>& other = got.at(blob);
    ASSERT_EQ(other.size(), values.size()) << blob;
    for (size_t i = 0; i < values.size(); ++i) {
      ASSERT_NEAR(other[i], values[i], 1e-4f + 1e-3f * std::fabs(values[i])) << blob << "[" << i << "]";
    }
  }
}

// With recomputation, a planned arena, the dag executor and the test net in a child workspace,
// the blocked nets train to the parameters (and running statistics) the plain ones train to.
TEST(BlockedLayoutsTest, ResNetTrainsAsWithoutBlockedLayouts) {
  if (Block() == 0) GTEST_SKIP() << kWhyNothingIsBlocked;
  const TrainingNets plain = SmallResNet(false), blocked = SmallResNet(true);
  EXPECT_EQ(CountBlockedOutputs(plain.train), 0);
  EXPECT_GT(CountBlockedOutputs(blocked.train), 50);
  EXPECT_GT(CountBlockedOutputs(blocked.test), 10);
  ExpectSameTraining(plain, blocked);
}

TEST(BlockedLayoutsTest, DataParallelResNetTrainsAsWithoutBlockedLayouts) {
  if (Block() == 0) GTEST_SKIP() << kWhyNothingIsBlocked;
  DeviceOption cpu0, cpu1;
  cpu1.set_device_id(1);
  ExpectSameTraining(ReplicateForDevices(SmallResNet(false), {cpu0, cpu1}),
                     ReplicateForDevices(SmallResNet(true), {cpu0, cpu1}));
}

}  // namespace
}  // namespace braid
