// LabelCrossEntropy, AveragedLoss, SoftmaxWithLoss, Accuracy and their gradient ops: values against
// hand computations, shape inference against the kernels, and errors naming the blobs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/layers/layer_test_util.h"

namespace braid::test {
namespace {

TEST(LabelCrossEntropyTest, TakesMinusLogOfTheLabelledProbability) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, {0.2, 0.5, 0.3, 0.1, 0.1, 0.8});
  Feed<int32_t>(&ws, "label", {2}, {1, 2});
  ASSERT_TRUE(RunOp(&ws, R"(type: "LabelCrossEntropy" input: "X" input: "label" output: "Y")"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{2}));
  ExpectNear(Fetch<float>(ws, "Y"), {-std::log(0.5f), -std::log(0.8f)}, 1e-6f);
}

TEST(LabelCrossEntropyTest, ClampsZeroProbabilityAndAcceptsColumnLabels) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 2}, {0, 1, 1, 0});
  Feed<int32_t>(&ws, "label", {2, 1}, {0, 0});
  ASSERT_TRUE(RunOp(&ws, R"(type: "LabelCrossEntropy" input: "X" input: "label" output: "Y")"));
  ExpectNear(Fetch<float>(ws, "Y"), {-std::log(1e-20f), 0}, 1e-4f);
}

TEST(LabelCrossEntropyTest, OutOfRangeLabelNamesBlobIndexAndValue) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, std::vector<float>(6, 0.3f));
  Feed<int32_t>(&ws, "L", {2}, {0, 3});
  const std::string error =
      RunOpError(&ws, R"(type: "LabelCrossEntropy" input: "X" input: "L" output: "Y")");
  EXPECT_TRUE(Contains(error, "label 'L'[1] = 3 is not in [0, 3)")) << error;
}

TEST(LabelCrossEntropyTest, LabelShapeAndTypeErrorsNameTheBlobs) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, std::vector<float>(6, 0.3f));
  Feed<int32_t>(&ws, "L3", {3}, {0, 1, 2});
  Feed<int64_t>(&ws, "L64", {2}, {0, 1});
  const std::string op = R"(type: "LabelCrossEntropy" input: "X" input: "L3" output: "Y")";
  EXPECT_TRUE(Contains(InferError(ws, op),
                       "label 'L3' int32[3] must have one entry per row of "
                       "scores 'X' float32[2,3]"));
  EXPECT_TRUE(Contains(RunOpError(&ws, op), "label 'L3' int32[3]"));
  EXPECT_TRUE(
      Contains(RunOpError(&ws, R"(type: "LabelCrossEntropy" input: "X" input: "L64" output: "Y")"),
               "input 'L64' int64[2] must be int32"));
}

TEST(LabelCrossEntropyGradientTest, IsMinusDYOverTheProbabilityAtTheLabel) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 2}, {0.25, 0.75, 0.5, 0.5});
  Feed<int32_t>(&ws, "L", {2}, {1, 0});
  Feed<float>(&ws, "dY", {2}, {3, -1});
  ASSERT_TRUE(RunOp(
      &ws, R"(type: "LabelCrossEntropyGradient" input: "X" input: "L" input: "dY" output: "dX")"));
  ExpectNear(Fetch<float>(ws, "dX"), {0, -4, 2, 0}, 1e-6f);
}

TEST(AveragedLossTest, MeanIsAScalarAndItsGradientSpreadsDY) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 2}, {1, 2, 3, 6});
  ASSERT_TRUE(RunOp(&ws, R"(type: "AveragedLoss" input: "X" output: "loss")"));
  EXPECT_EQ(ShapeOf(ws, "loss"), std::vector<int64_t>{});
  EXPECT_EQ(Fetch<float>(ws, "loss"), std::vector<float>{3});
  Feed<float>(&ws, "dloss", {}, {2});
  ASSERT_TRUE(RunOp(&ws, R"(type: "AveragedLossGradient" input: "X" input: "dloss" output: "dX")"));
  EXPECT_EQ(Fetch<float>(ws, "dX"), std::vector<float>(4, 0.5f));
  EXPECT_EQ(ShapeOf(ws, "dX"), (std::vector<int64_t>{2, 2}));
}

// The loss and softmax of logits x [n, d] against labels, with per-row weights, in double.
struct SoftmaxLoss {
  std::vector<float> p;
  float loss;
};
SoftmaxLoss NaiveSoftmaxLoss(const std::vector<float>& x, const std::vector<int32_t>& labels,
                             const std::vector<float>& weights, int n, int d, float scale) {
  SoftmaxLoss out{std::vector<float>(x.size()), 0};
  double loss = 0, total = 0;
  for (int i = 0; i < n; ++i) {
    double sum = 0;
    for (int j = 0; j < d; ++j) sum += std::exp(static_cast<double>(x[i * d + j]));
    for (int j = 0; j < d; ++j) out.p[i * d + j] = std::exp(x[i * d + j]) / sum;
    loss += -weights[i] * std::log(out.p[i * d + labels[i]]);
    total += weights[i];
  }
  out.loss = static_cast<float>(scale * loss / total);
  return out;
}

TEST(SoftmaxWithLossTest, MatchesSoftmaxThenMeanCrossEntropy) {
  Workspace ws;
  const std::vector<float> x = RandomFloats(11, 12, -2.f, 2.f);
  Feed<float>(&ws, "X", {4, 3}, x);
  Feed<int32_t>(&ws, "L", {4}, {0, 2, 1, 2});
  ASSERT_TRUE(RunOp(&ws, R"(type: "SoftmaxWithLoss" input: "X" input: "L" output: "P"
                            output: "loss")"));
  const SoftmaxLoss expected = NaiveSoftmaxLoss(x, {0, 2, 1, 2}, {1, 1, 1, 1}, 4, 3, 1);
  ExpectNear(Fetch<float>(ws, "P"), expected.p, 1e-6f);
  ExpectNear(Fetch<float>(ws, "loss"), {expected.loss}, 1e-6f);
  EXPECT_EQ(ShapeOf(ws, "loss"), std::vector<int64_t>{});
}

TEST(SoftmaxWithLossTest, WeightsAndScaleFollowCaffe2) {
  Workspace ws;
  const std::vector<float> x = RandomFloats(12, 6);
  Feed<float>(&ws, "X", {3, 2}, x);
  Feed<int32_t>(&ws, "L", {3}, {1, 0, 1});
  Feed<float>(&ws, "W", {3}, {0.5, 2, 0});
  ASSERT_TRUE(RunOp(&ws, R"(type: "SoftmaxWithLoss" input: "X" input: "L" input: "W"
                            output: "P" output: "loss" arg { name: "scale" f: 3 })"));
  const SoftmaxLoss expected = NaiveSoftmaxLoss(x, {1, 0, 1}, {0.5, 2, 0}, 3, 2, 3);
  ExpectNear(Fetch<float>(ws, "loss"), {expected.loss}, 1e-5f);
  Feed<float>(&ws, "W0", {3}, {0, 0, 0});
  ASSERT_TRUE(RunOp(&ws, R"(type: "SoftmaxWithLoss" input: "X" input: "L" input: "W0"
                            output: "P" output: "zero")"));
  EXPECT_EQ(Fetch<float>(ws, "zero"), std::vector<float>{0});
}

TEST(SoftmaxWithLossTest, LabelProbabilitiesGiveTheExpectedCrossEntropy) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 2}, {0, std::log(3.f)});  // P = [0.25, 0.75]
  Feed<float>(&ws, "T", {1, 2}, {0.5, 0.5});
  ASSERT_TRUE(RunOp(&ws, R"(type: "SoftmaxWithLoss" input: "X" input: "T" output: "P"
                            output: "loss" arg { name: "label_prob" i: 1 })"));
  ExpectNear(Fetch<float>(ws, "loss"), {-0.5f * std::log(0.25f) - 0.5f * std::log(0.75f)}, 1e-6f);
}

TEST(SoftmaxWithLossTest, WrongWeightsNameTheBlob) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, std::vector<float>(6, 0));
  Feed<int32_t>(&ws, "L", {2}, {0, 1});
  Feed<float>(&ws, "W", {3}, {1, 1, 1});
  const std::string op = R"(type: "SoftmaxWithLoss" input: "X" input: "L" input: "W" output: "P"
                            output: "loss")";
  EXPECT_TRUE(Contains(RunOpError(&ws, op), "weights 'W' float32[3] must be float32 with 2"));
  EXPECT_TRUE(Contains(InferError(ws, op), "weights 'W' float32[3]"));
}

TEST(SoftmaxWithLossGradientTest, IsPMinusOneHotScaledByWeightOverTotal) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 2}, {0, 0, 0, 0});
  Feed<int32_t>(&ws, "L", {2}, {1, 0});
  Feed<float>(&ws, "W", {2}, {1, 3});
  Feed<float>(&ws, "P", {2, 2}, {0.25, 0.75, 0.5, 0.5});
  Feed<float>(&ws, "dloss", {}, {2});
  ASSERT_TRUE(RunOp(&ws, R"(type: "SoftmaxWithLossGradient" input: "X" input: "L" input: "W"
                            input: "P" input: "dloss" output: "dX" arg { name: "scale" f: 0.5 })"));
  // g = scale * dloss / total = 0.5 * 2 / 4 = 0.25; row i scaled by w_i * g.
  ExpectNear(Fetch<float>(ws, "dX"), {0.25f * 0.25f, -0.25f * 0.25f, -0.5f * 0.75f, 0.5f * 0.75f},
             1e-6f);
}

TEST(AccuracyTest, CountsLabelsAmongTheTopK) {
  Workspace ws;
  Feed<float>(&ws, "pred", {4, 3},
              {0.1, 0.7, 0.2,    // label 1: top 1
               0.5, 0.3, 0.2,    // label 1: second
               0.2, 0.2, 0.6,    // label 0: class 2 above, the tie with 1 not
               0.4, 0.4, 0.2});  // label 1: tie with 0, 0 ranks above
  Feed<int32_t>(&ws, "label", {4}, {1, 1, 0, 1});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Accuracy" input: "pred" input: "label" output: "top1")"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Accuracy" input: "pred" input: "label" output: "top2"
                            arg { name: "top_k" i: 2 })"));
  EXPECT_EQ(Fetch<float>(ws, "top1"), std::vector<float>{0.25});
  EXPECT_EQ(Fetch<float>(ws, "top2"), std::vector<float>{1});
  EXPECT_EQ(ShapeOf(ws, "top1"), std::vector<int64_t>{});
}

TEST(AccuracyTest, RejectsTopKBelowOne) {
  Workspace ws;
  Feed<float>(&ws, "pred", {1, 2}, {0, 1});
  Feed<int32_t>(&ws, "label", {1}, {1});
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "Accuracy" input: "pred" input: "label"
                                          output: "a" arg { name: "top_k" i: 0 })"),
                       "argument 'top_k' must be >= 1, got 0"));
}

}  // namespace
}  // namespace braid::test
