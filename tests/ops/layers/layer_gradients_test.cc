// The gradient makers of ops/activation, ops/loss, ops/tensor and ops/train, each checked against
// finite differences with CheckGradient, plus what the makers build where that matters (Split's
// zeros for outputs without a gradient, the refusals).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "braid/status.h"
#include "ops/layers/layer_test_util.h"
#include "runtime/core/autodiff.h"
#include "runtime/core/gradient.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;
using ::braid::testing::GradientCheckOptions;

::testing::AssertionResult Check(Workspace* ws, const std::string& op_text,
                                 GradientCheckOptions options = {}) {
  return CheckGradient(ParseOp(op_text), ws, options);
}

TEST(ActivationGradientTest, SigmoidTanhSoftmax) {
  Workspace ws;
  FeedRandom(&ws, "X", {3, 4}, 1, -2.f, 2.f);
  FeedRandom(&ws, "X3", {2, 3, 2}, 2, -2.f, 2.f);
  EXPECT_TRUE(Check(&ws, R"(type: "Sigmoid" input: "X" output: "Y")"));
  EXPECT_TRUE(Check(&ws, R"(type: "Tanh" input: "X" output: "Y")"));
  EXPECT_TRUE(Check(&ws, R"(type: "Softmax" input: "X" output: "Y")"));
  EXPECT_TRUE(Check(&ws, R"(type: "Softmax" input: "X3" output: "Y" arg { name: "axis" i: 2 })"));
}

TEST(ActivationGradientTest, InPlaceForwardOps) {
  Workspace ws;
  FeedRandom(&ws, "X", {2, 5}, 3, -2.f, 2.f);
  EXPECT_TRUE(Check(&ws, R"(type: "Sigmoid" input: "X" output: "X")"));
  EXPECT_TRUE(Check(&ws, R"(type: "Softmax" input: "X" output: "X")"));
}

TEST(LossGradientTest, LabelCrossEntropyAndAveragedLoss) {
  Workspace ws;
  FeedRandom(&ws, "P", {3, 4}, 4, 0.2f, 0.9f);
  Feed<int32_t>(&ws, "L", {3}, {0, 3, 1});
  EXPECT_TRUE(Check(&ws, R"(type: "LabelCrossEntropy" input: "P" input: "L" output: "Y")"));
  EXPECT_TRUE(Check(&ws, R"(type: "AveragedLoss" input: "P" output: "Y")"));
}

TEST(LossGradientTest, SoftmaxWithLossPlainWeightedScaledAndWithLabelProbabilities) {
  Workspace ws;
  FeedRandom(&ws, "X", {4, 3}, 5, -2.f, 2.f);
  Feed<int32_t>(&ws, "L", {4}, {2, 0, 1, 1});
  Feed<float>(&ws, "W", {4}, {1, 0.5, 2, 0});
  Feed<float>(&ws, "T", {4, 3}, {0.2, 0.3, 0.5, 1, 0, 0, 0, 0.5, 0.5, 0.1, 0.8, 0.1});
  GradientCheckOptions loss_only;
  loss_only.outputs = {1};
  EXPECT_TRUE(Check(&ws, R"(type: "SoftmaxWithLoss" input: "X" input: "L" output: "P"
                            output: "loss")",
                    loss_only));
  EXPECT_TRUE(Check(&ws, R"(type: "SoftmaxWithLoss" input: "X" input: "L" input: "W" output: "P"
                            output: "loss" arg { name: "scale" f: 2 })",
                    loss_only));
  EXPECT_TRUE(Check(&ws, R"(type: "SoftmaxWithLoss" input: "X" input: "T" output: "P"
                            output: "loss" arg { name: "label_prob" i: 1 })",
                    loss_only));
}

TEST(LossGradientTest, SoftmaxWithLossRefusesAGradientForItsSoftmax) {
  const OperatorDef op = ParseOp(R"(type: "SoftmaxWithLoss" input: "X" input: "L" output: "P"
                                    output: "loss")");
  const GradientMaker* maker = FindGradientMaker("SoftmaxWithLoss");
  ASSERT_NE(maker, nullptr);
  try {
    (*maker)(GradientRequest{op, {"P_grad", "loss_grad"}, {"X_grad", "L_grad"}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "its softmax output 'P' also needs one")) << e.what();
  }
}

TEST(TensorGradientTest, ConcatAndSplit) {
  Workspace ws;
  FeedRandom(&ws, "a", {2, 3}, 6);
  FeedRandom(&ws, "b", {2, 1}, 7);
  FeedRandom(&ws, "c", {2, 3}, 8);
  FeedRandom(&ws, "X", {4, 3}, 9);
  Feed<int32_t>(&ws, "sizes", {2}, {1, 3});
  EXPECT_TRUE(Check(&ws, R"(type: "Concat" input: "a" input: "b" output: "y" output: "info")"));
  EXPECT_TRUE(Check(&ws, R"(type: "Concat" input: "a" input: "c" output: "y" output: "info"
                            arg { name: "axis" i: 0 } arg { name: "add_axis" i: 1 })"));
  EXPECT_TRUE(Check(&ws, R"(type: "Split" input: "X" output: "p" output: "q"
                            arg { name: "axis" i: 0 })"));
  EXPECT_TRUE(Check(&ws, R"(type: "Split" input: "X" input: "sizes" output: "p" output: "q"
                            arg { name: "axis" i: 0 })"));
}

TEST(TensorGradientTest, SplitFillsZerosForOutputsWithoutAGradient) {
  Workspace ws;
  const std::string split_text = R"(type: "Split" input: "X" output: "p" output: "q"
                                     arg { name: "axis" i: 0 })";
  Feed<float>(&ws, "X", {4}, {1, 2, 3, 4});
  ASSERT_TRUE(RunOp(&ws, split_text));
  Feed<float>(&ws, "q_grad", {2}, {5, 6});
  const OperatorDef split = ParseOp(split_text);
  const GradientOps grad =
      (*FindGradientMaker("Split"))(GradientRequest{split, {"", "q_grad"}, {"X_grad"}});
  ASSERT_EQ(grad.ops.size(), 2u);
  EXPECT_EQ(grad.ops[0].type(), "ConstantFill");
  EXPECT_EQ(grad.ops[0].output(0), "p_grad_zeros");
  NetDef net;
  net.set_name("backward");
  for (const OperatorDef& op : grad.ops) *net.add_op() = op;
  ASSERT_TRUE(ws.RunNetOnce(net).ok());
  EXPECT_EQ(Fetch<float>(ws, "X_grad"), (std::vector<float>{0, 0, 5, 6}));
}

TEST(TensorGradientTest, ReshapeFlattenResizeLike) {
  Workspace ws;
  FeedRandom(&ws, "X", {2, 3, 2}, 10);
  FeedRandom(&ws, "like", {3, 4}, 11);
  Feed<int64_t>(&ws, "new_shape", {2}, {-1, 2});
  EXPECT_TRUE(Check(&ws, R"(type: "Reshape" input: "X" output: "Y" output: "old"
                            arg { name: "shape" ints: 0 ints: -1 })"));
  EXPECT_TRUE(Check(&ws, R"(type: "Reshape" input: "X" input: "new_shape" output: "Y"
                            output: "old")"));
  EXPECT_TRUE(Check(&ws, R"(type: "Reshape" input: "X" output: "X" output: "old"
                            arg { name: "shape" ints: 12 })"));
  EXPECT_TRUE(Check(&ws, R"(type: "Flatten" input: "X" output: "Y")"));
  EXPECT_TRUE(Check(&ws, R"(type: "ResizeLike" input: "X" input: "like" output: "Y")"));
}

TEST(TensorGradientTest, InPlaceResizeLikeHasNoGradient) {
  const OperatorDef op = ParseOp(R"(type: "ResizeLike" input: "X" input: "like" output: "X")");
  EXPECT_THROW((*FindGradientMaker("ResizeLike"))(GradientRequest{op, {"X_grad"}, {"a", "b"}}),
               Error);
}

TEST(TensorGradientTest, DropoutInTrainingAndTestMode) {
  Workspace ws;
  FeedRandom(&ws, "X", {4, 5}, 12);
  EXPECT_TRUE(Check(&ws, R"(type: "Dropout" input: "X" output: "Y" output: "mask"
                            arg { name: "ratio" f: 0.3 })"));
  EXPECT_TRUE(Check(&ws, R"(type: "Dropout" input: "X" output: "X" output: "mask")"));
  EXPECT_TRUE(Check(&ws, R"(type: "Dropout" input: "X" output: "Y"
                            arg { name: "is_test" i: 1 })"));
}

TEST(TrainGradientTest, WeightedSumWithAndWithoutWeightGradients) {
  Workspace ws;
  FeedRandom(&ws, "X0", {2, 3}, 13);
  FeedRandom(&ws, "X1", {2, 3}, 14);
  Feed<float>(&ws, "w0", {1}, {0.5});
  Feed<float>(&ws, "w1", {1}, {-2});
  const std::string sum = R"(type: "WeightedSum" input: "X0" input: "w0" input: "X1" input: "w1"
                             output: "Y" )";
  EXPECT_TRUE(Check(&ws, sum));
  EXPECT_TRUE(Check(&ws, sum + R"(arg { name: "grad_on_w" i: 1 })"));
  const GradientOps grad = (*FindGradientMaker("WeightedSum"))(
      GradientRequest{ParseOp(sum), {"Y_grad"}, {"X0_grad", "w0_grad", "X1_grad", "w1_grad"}});
  EXPECT_EQ(grad.has_input_grad, (std::vector<bool>{true, false, true, false}));
}

TEST(TrainGradientTest, AccuracyAndTheOptimizerOpsStopTheGradient) {
  for (const char* type : {"Accuracy", "Iter", "LearningRate", "MomentumSGDUpdate"}) {
    const GradientMaker* maker = FindGradientMaker(type);
    ASSERT_NE(maker, nullptr) << type;
    OperatorDef op;
    op.set_type(type);
    op.add_input("a");
    op.add_output("b");
    const GradientOps grad = (*maker)(GradientRequest{op, {"b_grad"}, {"a_grad"}});
    EXPECT_TRUE(grad.ops.empty()) << type;
    EXPECT_EQ(grad.has_input_grad, std::vector<bool>{false}) << type;
  }
}

// The forward net of the end-to-end check: every layer op with a gradient on one path, an in-place
// Tanh and Dropout, and Accuracy (no gradient) reading the softmax.
NetDef LayerNet(const std::string& name) {
  NetDef net = NetOf({
      R"(type: "FC" input: "X" input: "W" input: "b" output: "h")",
      R"(type: "Tanh" input: "h" output: "h")",
      R"(type: "Split" input: "h" output: "h1" output: "h2" arg { name: "split" ints: 2 ints: 4 })",
      R"(type: "Concat" input: "h2" input: "h1" output: "c" output: "c_info")",
      R"(type: "Reshape" input: "c" output: "r" output: "r_old" arg { name: "shape" ints: 0
         ints: 2 ints: 3 })",
      R"(type: "Flatten" input: "r" output: "f")",
      R"(type: "Dropout" input: "f" output: "f" output: "mask" arg { name: "ratio" f: 0.3 }
         arg { name: "seed" i: 3 })",
      R"(type: "Sigmoid" input: "f" output: "s")",
      R"(type: "SoftmaxWithLoss" input: "s" input: "L" output: "P" output: "loss")",
      R"(type: "Accuracy" input: "P" input: "L" output: "accuracy")",
  });
  net.set_name(name);
  return net;
}

TEST(LayerAutodiffTest, BackwardPassOfALayerNetMatchesFiniteDifferences) {
  Workspace ws;
  FeedRandom(&ws, "X", {3, 4}, 20);
  FeedRandom(&ws, "W", {6, 4}, 21);
  FeedRandom(&ws, "b", {6}, 22);
  Feed<int32_t>(&ws, "L", {3}, {0, 5, 2});
  NetDef train = LayerNet("train");
  const GradientMap grads = AddGradientOperators(&train, {"loss"});
  ASSERT_EQ(grads.count("W"), 1u);
  ASSERT_TRUE(ws.RunNetOnce(train).ok());
  const std::vector<float> analytic = Fetch<float>(ws, grads.at("W"));
  const std::vector<float> w = Fetch<float>(ws, "W");
  // A fresh forward net per evaluation: Dropout then draws the train run's mask again.
  const NetDef forward = LayerNet("forward");
  const float step = 1e-3f;
  for (size_t j = 0; j < w.size(); ++j) {
    double loss[2];
    for (int side = 0; side < 2; ++side) {
      ws.GetBlob("W")->mutable_data<float>()[j] = w[j] + (side ? step : -step);
      ASSERT_TRUE(ws.RunNetOnce(forward).ok());
      loss[side] = Fetch<float>(ws, "loss")[0];
    }
    ws.GetBlob("W")->mutable_data<float>()[j] = w[j];
    EXPECT_NEAR(analytic[j], (loss[1] - loss[0]) / (2 * step), 2e-3) << "W element " << j;
  }
}

}  // namespace
}  // namespace braid::test
