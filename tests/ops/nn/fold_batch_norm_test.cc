// FoldBatchNorm (runtime/models/fold_batch_norm.h): which Conv + SpatialBN pairs an inference net's
// loader folds, that the folded net computes what the unfolded one does (within rounding), and that
// the Predictor folds by default.
#include "runtime/models/fold_batch_norm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "braid/predictor.h"
#include "ops/op_test_util.h"
#include "runtime/core/workspace.h"

namespace braid::test {
namespace {

// Parameters of a SpatialBN named `p` over `c` channels (variances positive, away from 0).
void FeedBn(Workspace* ws, const std::string& p, int64_t c, uint32_t seed) {
  Feed<float>(ws, p + "_s", {c}, UniformFloats(c, seed, 0.5f, 1.5f));
  Feed<float>(ws, p + "_b", {c}, UniformFloats(c, seed + 1));
  Feed<float>(ws, p + "_m", {c}, UniformFloats(c, seed + 2));
  Feed<float>(ws, p + "_v", {c}, UniformFloats(c, seed + 3, 0.2f, 2.f));
}

std::string Bn(const std::string& p, const std::string& x, const std::string& y,
               const std::string& extra = "") {
  return "type: 'SpatialBN' input: '" + x + "' input: '" + p + "_s' input: '" + p + "_b' input: '" +
         p + "_m' input: '" + p + "_v' output: '" + y + "' arg { name: 'is_test' i: 1 } " + extra;
}

// X [2,8,9,9]; W1 [16,8,3,3] with bias b1; W2 [16,8,3,3] (group 2) without; two batch norms.
std::set<std::string> FeedTwoLayers(Workspace* ws) {
  Feed<float>(ws, "X", {2, 8, 9, 9}, UniformFloats(2 * 8 * 81, 1));
  Feed<float>(ws, "W1", {16, 8, 3, 3}, UniformFloats(16 * 8 * 9, 2));
  Feed<float>(ws, "b1", {16}, UniformFloats(16, 3));
  Feed<float>(ws, "W2", {16, 8, 3, 3}, UniformFloats(16 * 8 * 9, 4));
  FeedBn(ws, "bn1", 16, 10);
  FeedBn(ws, "bn2", 16, 20);
  return {"W1", "b1", "W2", "bn1_s", "bn1_b", "bn1_m", "bn1_v", "bn2_s", "bn2_b", "bn2_m", "bn2_v"};
}

// Conv + bias -> BN (epsilon 1e-3) -> Relu -> grouped strided Conv without bias -> BN in place ->
// Relu -> out.
NetDef TwoLayers() {
  NetDef net = NetOf({
      "type: 'Conv' input: 'X' input: 'W1' input: 'b1' output: 'x1' arg { name: 'pad' i: 1 }",
      Bn("bn1", "x1", "y1", "arg { name: 'epsilon' f: 0.001 }"),
      "type: 'Relu' input: 'y1' output: 'r1'",
      "type: 'Conv' input: 'r1' input: 'W2' output: 'x2' arg { name: 'pad' i: 1 } "
      "arg { name: 'stride' i: 2 } arg { name: 'group' i: 2 }",
      Bn("bn2", "x2", "x2"),
      "type: 'Relu' input: 'x2' output: 'out'",
  });
  net.add_external_output("out");
  return net;
}

TEST(FoldBatchNormTest, FoldsEachBatchNormIntoItsConvAndComputesTheSameOutput) {
  Workspace plain;
  FeedTwoLayers(&plain);
  ASSERT_TRUE(plain.RunNetOnce(TwoLayers()).ok());
  const std::vector<float> want = Fetch<float>(plain, "out");

  Workspace ws;
  const std::set<std::string> parameters = FeedTwoLayers(&ws);
  NetDef net = TwoLayers();
  EXPECT_EQ(FoldBatchNorm(&net, parameters, &ws), 2);
  EXPECT_EQ(OpTypes(net), (std::vector<std::string>{"Conv", "Relu", "Conv", "Relu"}));
  // The first Conv keeps its bias blob and writes the BN's output; the second takes bn2's bias.
  EXPECT_EQ(net.op(0).input(2), "b1");
  EXPECT_EQ(net.op(0).output(0), "y1");
  ASSERT_EQ(net.op(2).input_size(), 3);
  EXPECT_EQ(net.op(2).input(2), "bn2_b");
  EXPECT_EQ(net.op(2).output(0), "x2");
  ASSERT_TRUE(ws.RunNetOnce(net).ok());
  ExpectCloseToScale(Fetch<float>(ws, "out"), want);
}

TEST(FoldBatchNormTest, LeavesEveryBatchNormItCannotFoldAsItIs) {
  const std::string conv = "type: 'Conv' input: 'X' input: 'W1' input: 'b1' output: 'x1' ";
  struct Case {
    std::string why;
    std::vector<std::string> ops;
    std::vector<std::string> outputs;
    std::set<std::string> not_parameters;
  };
  const std::vector<Case> cases = {
      {"training mode",
       {conv,
        "type: 'SpatialBN' input: 'x1' input: 'bn1_s' input: 'bn1_b' "
        "input: 'bn1_m' input: 'bn1_v' output: 'y1' output: 'bn1_m' "
        "output: 'bn1_v' output: 'sm' output: 'siv'"},
       {"y1"},
       {}},
      {"X read by another op",
       {conv, Bn("bn1", "x1", "y1"), "type: 'Relu' input: 'x1' output: 'r'"},
       {"y1", "r"},
       {}},
      {"X fetched", {conv, Bn("bn1", "x1", "y1")}, {"y1", "x1"}, {}},
      {"filter shared",
       {conv, Bn("bn1", "x1", "y1"), "type: 'Conv' input: 'X' input: 'W1' output: 'z'"},
       {"y1", "z"},
       {}},
      {"bias written",
       {conv, Bn("bn1", "x1", "y1"), "type: 'Relu' input: 'y1' output: 'b1'"},
       {"b1"},
       {}},
      {"BN bias shared",
       {conv, Bn("bn1", "x1", "y1"), "type: 'Relu' input: 'bn1_b' output: 'r'"},
       {"y1", "r"},
       {}},
      {"variance not a parameter", {conv, Bn("bn1", "x1", "y1")}, {"y1"}, {"bn1_v"}},
      {"Y read between the two",
       {"type: 'Relu' input: 'X' output: 'y1'", conv, "type: 'Relu' input: 'y1' output: 'r'",
        Bn("bn1", "x1", "y1")},
       {"y1", "r"},
       {}},
      {"NHWC", {conv + "arg { name: 'order' s: 'NHWC' }", Bn("bn1", "x1", "y1")}, {"y1"}, {}},
      {"Y is the Conv's input",
       {"type: 'Conv' input: 'y1' input: 'W1' input: 'b1' output: 'x1'", Bn("bn1", "x1", "y1")},
       {"y1"},
       {}},
      {"X a control input",
       {conv, Bn("bn1", "x1", "y1"), "type: 'Copy' input: 'y1' output: 'r' control_input: 'x1'"},
       {"r"},
       {}},
  };
  for (const Case& c : cases) {
    Workspace ws;
    std::set<std::string> parameters = FeedTwoLayers(&ws);
    for (const std::string& name : c.not_parameters) parameters.erase(name);
    NetDef net = NetOf(c.ops);
    for (const std::string& out : c.outputs) net.add_external_output(out);
    const std::string before = net.DebugString();
    const std::vector<float> w1 = Fetch<float>(ws, "W1");
    EXPECT_EQ(FoldBatchNorm(&net, parameters, &ws), 0) << c.why;
    EXPECT_EQ(net.DebugString(), before) << c.why;
    EXPECT_EQ(Fetch<float>(ws, "W1"), w1) << c.why;
  }
}

// The Predictor folds (by default) and answers as the unfolded net does.
TEST(FoldBatchNormTest, ThePredictorFoldsAndAnswersAsTheUnfoldedNet) {
  Workspace params;
  const std::set<std::string> names = FeedTwoLayers(&params);
  const NetDef init = InitNetOf(params, {names.begin(), names.end()});
  NetDef predict = TwoLayers();
  predict.set_name("predict");
  predict.add_external_input("X");
  const std::vector<float> x = UniformFloats(2 * 8 * 81, 1);
  std::map<std::string, std::vector<float>> out;
  for (const bool fold : {false, true}) {
    PredictorOptions options;
    options.optimize_graph = fold;
    std::unique_ptr<Predictor> predictor;
    const Status made = Predictor::FromNetDefs(init, predict, options, &predictor);
    ASSERT_TRUE(made.ok()) << made.ToString();
    std::map<std::string, OutputTensor> outputs;
    const Status ran = predictor->Run({{"X", InputView::Of(x.data(), {2, 8, 9, 9})}}, &outputs);
    ASSERT_TRUE(ran.ok()) << ran.ToString();
    const OutputTensor& y = outputs.at("out");
    out[fold ? "folded" : "plain"].assign(y.data<float>(), y.data<float>() + y.numel());
  }
  ExpectCloseToScale(out["folded"], out["plain"]);
  EXPECT_NE(out["folded"], out["plain"]);  // rounded once more: folding did happen
}

}  // namespace
}  // namespace braid::test
