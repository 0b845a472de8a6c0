// Gradients of the ops in ops/math: each maker with CheckGradient, and the gradient kernels'
// values, shape inference and in-place use directly.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "braid/status.h"
#include "ops/op_test_util.h"
#include "runtime/core/gradient.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;
using ::braid::testing::GradientCheckOptions;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Values in [-1, -0.1] U [0.1, 1]: away from Relu's kink by much more than the checker's step.
std::vector<float> RandomValues(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> magnitude(0.1f, 1.f);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (rng() % 2 ? 1 : -1) * magnitude(rng);
  return v;
}

void FeedRandom(Workspace* ws, const std::string& name, std::vector<int64_t> dims, uint64_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  Feed<float>(ws, name, std::move(dims), RandomValues(seed, n));
}

TEST(ReluGradientTest, MatchesFiniteDifferences) {
  Workspace ws;
  FeedRandom(&ws, "X", {3, 4}, 1);
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Relu" input: "X" output: "Y")"), &ws));
}

TEST(ReluGradientTest, InPlaceReluMatchesFiniteDifferences) {
  Workspace ws;
  FeedRandom(&ws, "X", {2, 5}, 2);
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Relu" input: "X" output: "X")"), &ws));
}

TEST(ReluGradientTest, PassesDYWherePositiveAndRunsInPlace) {
  Workspace ws;
  Feed<float>(&ws, "Y", {4}, {0, 2, 0, 0.5});
  Feed<float>(&ws, "dY", {4}, {1, 2, 3, 4});
  ASSERT_TRUE(RunOp(&ws, R"(type: "ReluGradient" input: "Y" input: "dY" output: "dX")"));
  EXPECT_EQ(Fetch<float>(ws, "dX"), (std::vector<float>{0, 2, 0, 4}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "ReluGradient" input: "Y" input: "dY" output: "dY")"));
  EXPECT_EQ(Fetch<float>(ws, "dY"), (std::vector<float>{0, 2, 0, 4}));
}

TEST(ReluGradientTest, NamesMismatchedShapes) {
  Workspace ws;
  Feed<float>(&ws, "Y", {4}, {0, 2, 0, 0.5});
  Feed<float>(&ws, "dY", {2}, {1, 2});
  std::string error = InferError(ws, R"(type: "ReluGradient" input: "Y" input: "dY" output: "dX")");
  EXPECT_TRUE(Contains(error, "'dY' float32[2]")) << error;
}

TEST(FCGradientTest, MatchesFiniteDifferences) {
  Workspace ws;
  FeedRandom(&ws, "X", {3, 4}, 3);
  FeedRandom(&ws, "W", {5, 4}, 4);
  FeedRandom(&ws, "b", {5}, 5);
  EXPECT_TRUE(
      CheckGradient(ParseOp(R"(type: "FC" input: "X" input: "W" input: "b" output: "Y")"), &ws));
}

TEST(FCGradientTest, MatchesFiniteDifferencesWithAxes) {
  Workspace ws;
  FeedRandom(&ws, "X", {2, 3, 4}, 6);
  FeedRandom(&ws, "W", {5, 2, 2}, 7);
  FeedRandom(&ws, "b", {5}, 8);
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "FC" input: "X" input: "W" input: "b" output: "Y"
                                       arg { name: "axis" i: 2 } arg { name: "axis_w" i: 1 })"),
                            &ws));
  Workspace flat;
  FeedRandom(&flat, "X", {2, 3, 4}, 9);
  FeedRandom(&flat, "W", {5, 12}, 10);
  FeedRandom(&flat, "b", {5}, 11);
  EXPECT_TRUE(
      CheckGradient(ParseOp(R"(type: "FC" input: "X" input: "W" input: "b" output: "Y")"), &flat));
}

TEST(FCGradientTest, ComputesProductsAndInfersShapes) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 2}, {1, 2, 3, 4});
  Feed<float>(&ws, "W", {3, 2}, {1, 0, 0, 1, 1, 1});
  Feed<float>(&ws, "dY", {2, 3}, {1, 0, 2, 0, 1, -1});
  ASSERT_TRUE(RunOp(&ws, R"(type: "FCGradient" input: "X" input: "W" input: "dY"
                            output: "dW" output: "db" output: "dX")"));
  // dW = dY^T X, db = column sums of dY, dX = dY W.
  EXPECT_EQ(Fetch<float>(ws, "dW"), (std::vector<float>{1, 2, 3, 4, -1, 0}));
  EXPECT_EQ(Fetch<float>(ws, "db"), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(Fetch<float>(ws, "dX"), (std::vector<float>{3, 2, -1, 0}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "FCGradient" input: "X" input: "W" input: "dY"
                            output: "dW2" output: "db2")"));
  EXPECT_EQ(Fetch<float>(ws, "dW2"), Fetch<float>(ws, "dW"));
}

TEST(FCGradientTest, NamesADYOfTheWrongShape) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 2}, {1, 2, 3, 4});
  Feed<float>(&ws, "W", {3, 2}, {1, 0, 0, 1, 1, 1});
  Feed<float>(&ws, "dY", {3, 2}, {1, 0, 2, 0, 1, -1});
  std::string error = InferError(ws, R"(type: "FCGradient" input: "X" input: "W" input: "dY"
                                        output: "dW" output: "db" output: "dX")");
  EXPECT_TRUE(Contains(error, "dY 'dY' float32[3,2] must be float32[2,3]")) << error;
}

TEST(FCGradientTest, EmptyBatchGivesZeroWeightGradients) {
  Workspace ws;
  ws.CreateBlob("X")->Resize(DType::kFloat32, {0, 2});
  ws.GetBlob("X")->mutable_data<float>();
  Feed<float>(&ws, "W", {3, 2}, {1, 0, 0, 1, 1, 1});
  ws.CreateBlob("dY")->Resize(DType::kFloat32, {0, 3});
  ws.GetBlob("dY")->mutable_data<float>();
  ASSERT_TRUE(RunOp(&ws, R"(type: "FCGradient" input: "X" input: "W" input: "dY"
                            output: "dW" output: "db" output: "dX")"));
  EXPECT_EQ(Fetch<float>(ws, "dW"), std::vector<float>(6, 0.f));
  EXPECT_EQ(Fetch<float>(ws, "db"), std::vector<float>(3, 0.f));
  EXPECT_EQ(ShapeOf(ws, "dX"), (std::vector<int64_t>{0, 2}));
}

TEST(SumGradientTest, MatchesFiniteDifferences) {
  Workspace ws;
  FeedRandom(&ws, "a", {2, 3}, 12);
  FeedRandom(&ws, "b", {2, 3}, 13);
  FeedRandom(&ws, "c", {2, 3}, 14);
  EXPECT_TRUE(
      CheckGradient(ParseOp(R"(type: "Sum" input: "a" input: "b" input: "c" output: "s")"), &ws));
}

TEST(SumGradientTest, RepeatedAndInPlaceInputs) {
  Workspace ws;
  FeedRandom(&ws, "a", {4}, 15);
  FeedRandom(&ws, "g", {4}, 16);
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Sum" input: "a" input: "a" output: "s")"), &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Sum" input: "a" input: "g" output: "a")"), &ws));
}

TEST(SumGradientTest, IsOneCopyOfDYPerInput) {
  OperatorDef sum = ParseOp(R"(type: "Sum" input: "a" input: "b" output: "s")");
  GradientOps grad = (*FindGradientMaker("Sum"))({sum, {"s_grad"}, {"a_grad", "b_grad"}});
  ASSERT_EQ(grad.ops.size(), 2u);
  EXPECT_EQ(grad.ops[0].type(), "Copy");
  EXPECT_EQ(grad.ops[0].input(0), "s_grad");
  EXPECT_EQ(grad.ops[1].output(0), "b_grad");
  EXPECT_EQ(grad.has_input_grad, (std::vector<bool>{true, true}));
}

TEST(CopyGradientTest, MatchesFiniteDifferences) {
  Workspace ws;
  FeedRandom(&ws, "X", {3, 2}, 17);
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Copy" input: "X" output: "Y")"), &ws));
}

TEST(AddGradientTest, MatchesFiniteDifferences) {
  Workspace ws;
  FeedRandom(&ws, "A", {2, 3}, 18);
  FeedRandom(&ws, "B", {2, 3}, 19);
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Add" input: "A" input: "B" output: "C")"), &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Add" input: "A" input: "B" output: "A")"), &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Add" input: "A" input: "A" output: "C")"), &ws));
}

TEST(AddGradientTest, BroadcastBIsSummedDown) {
  Workspace ws;
  FeedRandom(&ws, "A", {2, 3, 4}, 20);
  FeedRandom(&ws, "B", {3, 4}, 21);
  FeedRandom(&ws, "B1", {3}, 22);
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Add" input: "A" input: "B" output: "C"
                                       arg { name: "broadcast" i: 1 })"),
                            &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Add" input: "A" input: "B1" output: "A"
                                       arg { name: "broadcast" i: 1 } arg { name: "axis" i: 1 })"),
                            &ws));
}

TEST(MulGradientTest, MatchesFiniteDifferences) {
  Workspace ws;
  FeedRandom(&ws, "A", {2, 3}, 23);
  FeedRandom(&ws, "B", {2, 3}, 24);
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Mul" input: "A" input: "B" output: "C")"), &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Mul" input: "A" input: "A" output: "C")"), &ws));
}

TEST(MulGradientTest, BroadcastBIsSummedDown) {
  Workspace ws;
  FeedRandom(&ws, "A", {2, 3, 4}, 25);
  FeedRandom(&ws, "B", {4}, 26);
  FeedRandom(&ws, "B1", {3, 1}, 27);
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Mul" input: "A" input: "B" output: "C"
                                       arg { name: "broadcast" i: 1 })"),
                            &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Mul" input: "A" input: "B1" output: "C"
                                       arg { name: "broadcast" i: 1 } arg { name: "axis" i: 1 })"),
                            &ws));
}

TEST(MulGradientTest, ComputesBothGradientsAndInfersShapes) {
  Workspace ws;
  Feed<float>(&ws, "A", {2, 2}, {1, 2, 3, 4});
  Feed<float>(&ws, "B", {2}, {10, 100});
  Feed<float>(&ws, "dC", {2, 2}, {1, -1, 2, 0.5});
  ASSERT_TRUE(RunOp(&ws, R"(type: "MulGradient" input: "A" input: "B" input: "dC"
                            output: "dA" output: "dB" arg { name: "broadcast" i: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "dA"), (std::vector<float>{10, -100, 20, 50}));
  EXPECT_EQ(Fetch<float>(ws, "dB"), (std::vector<float>{1 + 6, -2 + 2}));
}

TEST(MulGradientTest, InPlaceMulHasNoGradient) {
  OperatorDef mul = ParseOp(R"(type: "Mul" input: "A" input: "B" output: "A")");
  try {
    (*FindGradientMaker("Mul"))({mul, {"A_grad"}, {"A_grad", "B_grad"}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "in place of its input 'A'")) << e.what();
  }
}

TEST(SumReduceLikeTest, SumsDownToBsShape) {
  Workspace ws;
  Feed<float>(&ws, "A", {2, 3, 2}, {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60});
  Feed<float>(&ws, "B", {3}, {0, 0, 0});
  ASSERT_TRUE(RunOp(&ws, R"(type: "SumReduceLike" input: "A" input: "B" output: "C"
                            arg { name: "broadcast" i: 1 } arg { name: "axis" i: 1 })"));
  EXPECT_EQ(ShapeOf(ws, "C"), (std::vector<int64_t>{3}));
  EXPECT_EQ(Fetch<float>(ws, "C"), (std::vector<float>{33, 77, 121}));
  Feed<float>(&ws, "B2", {2, 3, 2}, std::vector<float>(12, 0.f));
  ASSERT_TRUE(RunOp(&ws, R"(type: "SumReduceLike" input: "A" input: "B2" output: "C2")"));
  EXPECT_EQ(Fetch<float>(ws, "C2"), Fetch<float>(ws, "A"));
}

TEST(SumReduceLikeTest, NamesShapesThatDoNotBroadcast) {
  Workspace ws;
  Feed<float>(&ws, "A", {2, 3}, std::vector<float>(6, 1.f));
  Feed<float>(&ws, "B", {4}, std::vector<float>(4, 1.f));
  std::string error = InferError(ws, R"(type: "SumReduceLike" input: "A" input: "B" output: "C"
                                        arg { name: "broadcast" i: 1 })");
  EXPECT_TRUE(Contains(error, "'B' float32[4]")) << error;
}

}  // namespace
}  // namespace braid::test
