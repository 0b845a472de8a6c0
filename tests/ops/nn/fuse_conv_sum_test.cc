// FuseConvSum (runtime/models/fuse_conv_sum.h) with Conv's fused_sum (ops/nn/conv_op.h): which
// residual additions an inference net's loader gives to the Conv before them, that the fused net
// computes what the unfused one does (with the ReLU after it fused too, in every pair of layouts
// of Y and the summand, in batch chunks), which additions it leaves alone, and the errors of a
// fused Conv given a bad summand.
#include "runtime/models/fuse_conv_sum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "braid/predictor.h"
#include "ops/nn/dnnl_util.h"
#include "ops/op_test_util.h"
#include "runtime/core/argument.h"
#include "runtime/core/autodiff.h"
#include "runtime/core/shape_inference.h"
#include "runtime/core/workspace.h"
#include "runtime/models/blocked_layouts.h"
#include "runtime/models/fuse_conv_activation.h"
#include "runtime/models/model_builder.h"
#include "runtime/models/optimize_inference.h"
#include "runtime/models/resnet.h"

namespace braid::test {
namespace {

void FeedBlock(Workspace* ws) {
  Feed<float>(ws, "X", {2, 16, 9, 9}, UniformFloats(2 * 16 * 81, 1));
  Feed<float>(ws, "W1", {16, 16, 3, 3}, UniformFloats(16 * 16 * 9, 2, -0.3f, 0.3f));
  Feed<float>(ws, "b1", {16}, UniformFloats(16, 3));
  Feed<float>(ws, "W2", {32, 16, 1, 1}, UniformFloats(32 * 16, 4, -0.3f, 0.3f));
  Feed<float>(ws, "b2", {32}, UniformFloats(32, 5));
  Feed<float>(ws, "Wp", {32, 16, 1, 1}, UniformFloats(32 * 16, 6, -0.3f, 0.3f));
}

const char kConv1[] =
    "type: 'Conv' input: 'X' input: 'W1' input: 'b1' output: 'x1' arg { name: 'pad' i: 1 }";
const char kConv2[] = "type: 'Conv' input: 'x1' input: 'W2' input: 'b2' output: 'x2'";
const char kProjection[] = "type: 'Conv' input: 'X' input: 'Wp' output: 'p'";

// A bottleneck-like residual block with a projection shortcut: the projection is written after
// the main branch's last Conv, as torchvision's exports order them.
NetDef ResidualBlock(const std::string& addition) {
  NetDef net = NetOf({kConv1, kConv2, kProjection,
                      "type: '" + addition + "' input: 'x2' input: 'p' output: 's'",
                      "type: 'Relu' input: 's' output: 'out'"});
  net.add_external_output("out");
  return net;
}

TEST(FuseConvSumTest, GivesTheAdditionAndItsReluToTheLaterConvAndComputesTheSameOutput) {
  for (const std::string addition : {"Sum", "Add"}) {
    Workspace plain;
    FeedBlock(&plain);
    ASSERT_TRUE(plain.RunNetOnce(ResidualBlock(addition)).ok());
    const std::vector<float> want = Fetch<float>(plain, "out");
    ASSERT_TRUE(std::any_of(want.begin(), want.end(), [](float v) { return v == 0.f; }));

    NetDef net = ResidualBlock(addition);
    EXPECT_EQ(FuseConvSum(&net), 1) << addition;
    EXPECT_EQ(FuseConvActivation(&net), 1) << addition;
    EXPECT_EQ(OpTypes(net), (std::vector<std::string>{"Conv", "Conv", "Conv"})) << addition;
    // The projection, written later, takes the sum; x2 is its summand, in the addition's place.
    const OperatorDef& fused = net.op(2);
    EXPECT_EQ(fused.input(0), "X");
    EXPECT_EQ(fused.input(fused.input_size() - 1), "x2");
    EXPECT_EQ(fused.output(0), "out");
    EXPECT_EQ(ArgumentReader(fused.arg()).Get<int64_t>("fused_sum", 0), 1);
    EXPECT_EQ(ArgumentReader(fused.arg()).Get<std::string>("fused_activation", ""), "Relu");
    Workspace ws;
    FeedBlock(&ws);
    ASSERT_TRUE(ws.RunNetOnce(net).ok());
    ExpectCloseToScale(Fetch<float>(ws, "out"), want);
  }
}

// A Conv whose summand is written after it moves to the addition's place, after that write, and
// reads what it read before: nothing between them writes its inputs.
TEST(FuseConvSumTest, AConvMovesToTheAdditionsPlaceAfterTheSummandIsWritten) {
  const std::vector<std::string> ops = {
      kConv1, "type: 'Relu' input: 'X' output: 'S'", "type: 'Copy' input: 'X' output: 'unrelated'",
      "type: 'Add' input: 'S' input: 'x1' output: 'y'", "type: 'Relu' input: 'y' output: 'y'"};
  Workspace plain;
  FeedBlock(&plain);
  NetDef unfused = NetOf(ops);
  unfused.add_external_output("y");
  ASSERT_TRUE(plain.RunNetOnce(unfused).ok());

  NetDef net = unfused;
  EXPECT_EQ(FuseConvSum(&net), 1);
  EXPECT_EQ(FuseConvActivation(&net), 1);
  EXPECT_EQ(OpTypes(net), (std::vector<std::string>{"Relu", "Copy", "Conv"}));
  EXPECT_EQ(net.op(2).input(3), "S");
  Workspace ws;
  FeedBlock(&ws);
  ASSERT_TRUE(ws.RunNetOnce(net).ok());
  ExpectCloseToScale(Fetch<float>(ws, "y"), Fetch<float>(plain, "y"));
}

// The summand is read in the primitive's layout whatever its own: every pair of plain and blocked
// Y and S gives the unfused values.
TEST(FuseConvSumTest, AFusedConvAddsASummandOfEitherLayoutIntoAYOfEitherLayout) {
  const int64_t block = NativeChannelBlock();
  if (block == 0) GTEST_SKIP() << "no blocked layout on this CPU";
  const std::string blocked = " arg { name: 'blocked_outputs' ints: 0 } arg { name: "
                              "'channel_block' i: " + std::to_string(block) + " }";
  Workspace unfused;
  FeedBlock(&unfused);
  ASSERT_TRUE(unfused.RunNetOnce(NetOf({kConv1, kConv2})).ok());
  std::vector<float> summand = Fetch<float>(unfused, "x2");  // a summand of Y's shape
  for (float& v : summand) v = -v * 0.75f;
  Feed<float>(&unfused, "S", {2, 32, 9, 9}, summand);
  ASSERT_TRUE(unfused.RunNetOnce(NetOf({kConv1, kConv2,
                                        "type: 'Sum' input: 'x2' input: 'S' output: 'y'",
                                        "type: 'Relu' input: 'y' output: 'y'"}))
                  .ok());
  const std::vector<float> want = Fetch<float>(unfused, "y");
  for (const bool s_blocked : {false, true}) {
    for (const bool y_blocked : {false, true}) {
      Workspace ws;
      FeedBlock(&ws);
      Feed<float>(&ws, "S0", {2, 32, 9, 9}, summand);
      // MaxPool with a 1x1 window copies S0 into S in its layout (blocked when asked).
      const std::string copy = std::string("type: 'MaxPool' input: 'S0' output: 'S' arg { name: "
                                           "'kernel' i: 1 }") +
                               (s_blocked ? blocked : "");
      const std::string conv = std::string(kConv2) +
                               " input: 'S' arg { name: 'fused_sum' i: 1 } "
                               "arg { name: 'fused_activation' s: 'Relu' }" +
                               (y_blocked ? blocked : "");
      std::string fused = conv;
      fused.replace(fused.find("output: 'x2'"), 12, "output: 'z'");
      ASSERT_TRUE(ws.RunNetOnce(NetOf({kConv1, copy, fused,
                                       "type: 'MaxPool' input: 'z' output: 'y' "
                                       "arg { name: 'kernel' i: 1 }"}))
                      .ok())
          << "S blocked " << s_blocked << ", Y blocked " << y_blocked;
      if (s_blocked) {
        EXPECT_NE(ws.GetBlob("S")->layout(), Layout::kPlain);
      }
      if (y_blocked) {
        EXPECT_NE(ws.GetBlob("z")->layout(), Layout::kPlain);
      }
      ExpectCloseToScale(Fetch<float>(ws, "y"), want);
    }
  }
}

// A batch whose X and Y exceed the Conv's scratch budget runs in chunks of samples
// (kChunkScratchBytes): each chunk adds its own samples of S.
TEST(FuseConvSumTest, ABatchInChunksAddsEachChunksOwnSamplesOfTheSummand) {
  const std::vector<int64_t> dims{6, 16, 256, 256};
  const int64_t n = 6 * 16 * 256 * 256;
  ASSERT_GT(BlockedBytesPerSample(dims) * 2 * dims[0], kChunkScratchBytes);
  const auto feed = [&](Workspace* ws) {
    Feed<float>(ws, "X", dims, UniformFloats(n, 7));
    Feed<float>(ws, "S", dims, UniformFloats(n, 8));
    Feed<float>(ws, "W", {16, 16, 1, 1}, UniformFloats(256, 9));
  };
  Workspace unfused;
  feed(&unfused);
  ASSERT_TRUE(unfused.RunNetOnce(NetOf({"type: 'Conv' input: 'X' input: 'W' output: 'c'",
                                        "type: 'Sum' input: 'c' input: 'S' output: 'y'"}))
                  .ok());
  Workspace ws;
  feed(&ws);
  ASSERT_TRUE(RunOp(&ws,
                    "type: 'Conv' input: 'X' input: 'W' input: 'S' output: 'y' "
                    "arg { name: 'fused_sum' i: 1 }"));
  ExpectCloseToScale(Fetch<float>(ws, "y"), Fetch<float>(unfused, "y"));
}

// The loader's three rewrites on a whole ResNet-20 inference net (Caffe2's builder: each block's
// Sum in place on its branch's last SpatialBN output, Relus in place): every SpatialBN, Sum and
// Relu goes into a Conv, and with blocked activations the net computes the unoptimised logits.
TEST(FuseConvSumTest, AResNetBecomesItsConvsAloneAndComputesTheSameLogits) {
  ModelParams params;
  NetDef net;
  net.set_name("resnet20");
  ModelBuilder builder(&params, &net, {.is_test = true});
  const std::string logits = AddResNet(&builder, ResNetSpecFromName("resnet20", 3, 10), "data");
  net.add_external_input("data");
  net.add_external_output(logits);
  const std::vector<float> image = UniformFloats(2 * 3 * 32 * 32, 12);

  Workspace plain;
  ASSERT_TRUE(plain.RunNetOnce(params.init_net).ok());
  Feed<float>(&plain, "data", {2, 3, 32, 32}, image);
  ASSERT_TRUE(plain.RunNetOnce(net).ok());
  const std::vector<float> want = Fetch<float>(plain, logits);

  Workspace ws;
  ASSERT_TRUE(ws.RunNetOnce(params.init_net).ok());
  const std::vector<std::string> names = ws.LocalBlobNames();
  const InferenceRewrites done = OptimizeInferenceNet(&net, {names.begin(), names.end()}, &ws);
  EXPECT_EQ(done.folded_batch_norms, 21);  // 19 Convs and 2 projections, each with its BN
  EXPECT_EQ(done.fused_sums, 9);           // one per block
  EXPECT_EQ(done.fused_activations, 19);   // the stem's, then two per block
  const std::vector<std::string> types = OpTypes(net);
  EXPECT_EQ(std::count(types.begin(), types.end(), "Conv"), 21);
  EXPECT_EQ(types.size(), 21u + 2u) << net.DebugString();  // and the pooling and the FC
  Feed<float>(&ws, "data", {2, 3, 32, 32}, image);
  if (NativeChannelBlock() != 0) {
    EXPECT_GT(UseBlockedLayouts(&net, ShapesOfWorkspaceBlobs(net, ws)), 0);
  }
  ASSERT_TRUE(ws.RunNetOnce(net).ok());
  ExpectCloseToScale(Fetch<float>(ws, logits), want);
}

// The Predictor (optimize_graph, by default) fuses the block and answers as the unfused net does,
// planned, on the dag executor, at two batch sizes.
TEST(FuseConvSumTest, ThePredictorFusesResidualBlocksAndAnswersAsTheUnfusedNet) {
  Workspace params;
  FeedBlock(&params);
  const NetDef init = InitNetOf(params, {"W1", "b1", "W2", "b2", "Wp"});
  NetDef predict = ResidualBlock("Add");
  predict.set_name("block");
  predict.add_external_input("X");
  for (const int64_t batch : {1, 3}) {
    const std::vector<float> x = UniformFloats(batch * 16 * 81, 14);
    std::map<bool, std::vector<float>> out;
    for (const bool optimize : {false, true}) {
      PredictorOptions options;
      options.optimize_graph = optimize;
      options.workers_per_run = 2;  // the dag executor
      std::unique_ptr<Predictor> predictor;
      const Status made = Predictor::FromNetDefs(init, predict, options, &predictor);
      ASSERT_TRUE(made.ok()) << made.ToString();
      std::map<std::string, OutputTensor> outputs;
      const Status ran =
          predictor->Run({{"X", InputView::Of(x.data(), {batch, 16, 9, 9})}}, &outputs);
      ASSERT_TRUE(ran.ok()) << ran.ToString();
      const OutputTensor& y = outputs.at("out");
      out[optimize].assign(y.data<float>(), y.data<float>() + y.numel());
    }
    ExpectCloseToScale(out[true], out[false]);
  }
}

TEST(FuseConvSumTest, LeavesEveryAdditionItCannotFuseAsItIs) {
  ExpectLeftAlone(FuseConvSum, {
      {"Add with broadcast",
       {kConv1, "type: 'Add' input: 'x1' input: 'b1' output: 's' arg { name: 'broadcast' i: 1 }"},
       {"s"}},
      {"three operands", {kConv1, "type: 'Sum' input: 'x1' input: 'X' input: 'X' output: 's'"},
       {"s"}},
      {"the summand is the output (in place)",
       {"type: 'Copy' input: 'X' output: 'r'", kConv1,
        "type: 'Sum' input: 'r' input: 'x1' output: 'r'"},
       {"r"}},
      {"the Conv's output read by another op",
       {kConv1, "type: 'Sum' input: 'x1' input: 'X' output: 's'",
        "type: 'Relu' input: 'x1' output: 'r'"},
       {"s", "r"}},
      {"the Conv's output fetched", {kConv1, "type: 'Sum' input: 'x1' input: 'X' output: 's'"},
       {"s", "x1"}},
      {"an input of the Conv written between",
       {kConv1, "type: 'Relu' input: 'X' output: 'X'",
        "type: 'Sum' input: 'x1' input: 'X' output: 's'"},
       {"s"}},
      {"on CUDA",
       {std::string(kConv1) + " device_option { device_type: 1 }",
        "type: 'Sum' input: 'x1' input: 'X' output: 's' device_option { device_type: 1 }"},
       {"s"}},
      {"on another device than the addition",
       {kConv1, "type: 'Sum' input: 'x1' input: 'X' output: 's' device_option { device_id: 1 }"},
       {"s"}},
      {"an activation fused already",
       {std::string(kConv1) + " arg { name: 'fused_activation' s: 'Relu' }",
        "type: 'Sum' input: 'x1' input: 'X' output: 's'"},
       {"s"}},
      {"a Conv with a sum fused already",
       {std::string(kConv1) + " input: 'X' arg { name: 'fused_sum' i: 1 }",
        "type: 'Sum' input: 'x1' input: 'X' output: 's'"},
       {"s"}},
      {"not a Conv",
       {"type: 'Relu' input: 'X' output: 'x1'", "type: 'Sum' input: 'x1' input: 'X' output: 's'"},
       {"s"}},
      {"a Conv saying fused_sum 0",
       {std::string(kConv1) + " arg { name: 'fused_sum' i: 0 }",
        "type: 'Sum' input: 'x1' input: 'X' output: 's'"},
       {"s"}},
      {"an addition with a control input",
       {kConv1, "type: 'Copy' input: 'X' output: 'z'",
        "type: 'Sum' input: 'x1' input: 'X' output: 's' control_input: 'z'"},
       {"s", "z"}},
      {"a control input of the Conv written between",
       {std::string(kConv1) + " control_input: 'z'", "type: 'Copy' input: 'X' output: 'z'",
        "type: 'Sum' input: 'x1' input: 'X' output: 's'"},
       {"s", "z"}},
      {"the Conv reads the output",
       {"type: 'Conv' input: 's' input: 'W1' input: 'b1' output: 'x1' arg { name: 'pad' i: 1 }",
        "type: 'Sum' input: 'x1' input: 'X' output: 's'"},
       {"s"}},
  });
}

TEST(FuseConvSumTest, AFusedConvRefusesABadSummandNamingIt) {
  Workspace ws;
  FeedBlock(&ws);
  const std::string fused =
      std::string(kConv1) + " name: 'c' input: 'S' arg { name: 'fused_sum' i: 1 }";
  Feed<float>(&ws, "S", {2, 16, 9, 8}, UniformFloats(2 * 16 * 72, 10));
  std::string error = RunOpError(&ws, fused);
  EXPECT_NE(error.find("summand 'S'"), std::string::npos) << error;
  EXPECT_NE(error.find("the shape of Y"), std::string::npos) << error;
  EXPECT_NE(error.find("'c'"), std::string::npos) << error;

  Feed<float>(&ws, "x1", {2, 16, 9, 9}, UniformFloats(2 * 16 * 81, 11));
  std::string in_place = fused;
  in_place.replace(in_place.find("input: 'S'"), 10, "input: 'x1'");
  error = RunOpError(&ws, in_place);
  EXPECT_NE(error.find("input 3 and output 0 are the same blob 'x1'"), std::string::npos) << error;

  error = RunOpError(&ws, std::string(kConv1) + " name: 'c' input: 'S'");
  EXPECT_NE(error.find("not 4 inputs"), std::string::npos) << error;

  Feed<float>(&ws, "S", {2, 16, 9, 9}, UniformFloats(2 * 16 * 81, 13));
  std::string two = fused;
  two.replace(two.find("i: 1 }", two.find("fused_sum")), 6, "i: 2 }");
  error = RunOpError(&ws, two);
  EXPECT_NE(error.find("Conv 'c': fused_sum = 2; it takes 0 or 1"), std::string::npos) << error;
}

TEST(FuseConvSumTest, AFusedConvHasNoGradient) {
  NetDef net = NetOf({std::string(kConv1) + " name: 'c1' input: 'X' arg { name: 'fused_sum' i: 1 }",
                      "type: 'AveragedLoss' input: 'x1' output: 'loss'"});
  try {
    AddGradientOperators(&net, {"loss"});
    ADD_FAILURE() << "a gradient for a fused Conv";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Conv 'c1' has fused_sum"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace braid::test
