// Tests of the numerical gradient checker itself, with test-only ops whose gradient makers are
// right or deliberately wrong.
#include "testing/gradient_checker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;
using ::braid::testing::GradientCheckOptions;

// Y = X * X, elementwise (float32).
class TestSquareOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    const Tensor& x = Input(0);
    float* y = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
    const float* xs = x.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) y[i] = xs[i] * xs[i];
  }
};

// dX = 2 X dY: Mul(X, dY) -> dX, then Add(dX, dX) -> dX.
GradientOps SquareGradient(const GradientRequest& r) {
  const std::string& dx = r.input_grads[0];
  return {{MakeGradientOp(r.op, "Mul", {r.op.input(0), r.output_grads[0]}, {dx}),
           MakeGradientOp(r.op, "Add", {dx, dx}, {dx})},
          {true}};
}

// Forgets the factor 2.
GradientOps WrongSquareGradient(const GradientRequest& r) {
  return {{MakeGradientOp(r.op, "Mul", {r.op.input(0), r.output_grads[0]}, {r.input_grads[0]})},
          {true}};
}

BRAID_OPERATOR_SCHEMA(TestSquare).NumInputs(1).NumOutputs(1).IdenticalTypeAndShape().NoArgs();
BRAID_OPERATOR_SCHEMA(TestWrongSquare).NumInputs(1).NumOutputs(1).IdenticalTypeAndShape().NoArgs();
BRAID_OPERATOR_SCHEMA(TestSquareNoMaker)
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalTypeAndShape()
    .NoArgs();
BRAID_OPERATOR_SCHEMA(TestSquareNoGradient)
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalTypeAndShape()
    .NoArgs();
BRAID_REGISTER_CPU_OPERATOR(TestSquare, TestSquareOp);
BRAID_REGISTER_CPU_OPERATOR(TestWrongSquare, TestSquareOp);
BRAID_REGISTER_CPU_OPERATOR(TestSquareNoMaker, TestSquareOp);
BRAID_REGISTER_CPU_OPERATOR(TestSquareNoGradient, TestSquareOp);
BRAID_REGISTER_GRADIENT(TestSquare, SquareGradient);
BRAID_REGISTER_GRADIENT(TestWrongSquare, WrongSquareGradient);
// What BRAID_NO_GRADIENT registers (that macro cannot be used yet: its lambda's braced comma
// splits the macro arguments).
[[maybe_unused]] const bool kNoGradientRegistered =
    RegisterGradient("TestSquareNoGradient", [](const GradientRequest& r) {
      return GradientOps{{}, std::vector<bool>(r.op.input_size(), false)};
    });

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

void FeedX(Workspace* ws) { Feed<float>(ws, "X", {2, 3}, {0.5f, -1.5f, 2.f, 0.25f, -0.75f, 1.f}); }

TEST(GradientCheckerTest, AcceptsARightGradient) {
  Workspace ws;
  FeedX(&ws);
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "TestSquare" input: "X" output: "Y")"), &ws));
}

TEST(GradientCheckerTest, CatchesAWrongGradientAndNamesTheWorstElement) {
  Workspace ws;
  FeedX(&ws);
  ::testing::AssertionResult result =
      CheckGradient(ParseOp(R"(type: "TestWrongSquare" input: "X" output: "Y")"), &ws);
  ASSERT_FALSE(result);
  const std::string message = result.message();
  EXPECT_TRUE(Contains(message, "input 'X' float32[2,3]")) << message;
  EXPECT_TRUE(Contains(message, "6 of 6 elements")) << message;
  // "worst element <j> (x = <x>): analytic <a>, numeric <n>", with a = n / 2 (the missing 2).
  float x = 0, analytic = 0, numeric = 0;
  int element = -1;
  const size_t at = message.find("worst element");
  ASSERT_NE(at, std::string::npos) << message;
  ASSERT_EQ(std::sscanf(message.c_str() + at, "worst element %d (x = %f): analytic %f, numeric %f",
                        &element, &x, &analytic, &numeric),
            4)
      << message;
  EXPECT_EQ(x, Fetch<float>(ws, "X")[element]);
  EXPECT_NEAR(analytic, numeric / 2, 1e-3f * std::abs(numeric)) << message;
}

TEST(GradientCheckerTest, LeavesTheFedInputsAndTheUnperturbedOutputs) {
  Workspace ws;
  FeedX(&ws);
  ASSERT_TRUE(CheckGradient(ParseOp(R"(type: "TestSquare" input: "X" output: "Y")"), &ws));
  EXPECT_EQ(Fetch<float>(ws, "X"), (std::vector<float>{0.5f, -1.5f, 2.f, 0.25f, -0.75f, 1.f}));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{0.25f, 2.25f, 4.f, 0.0625f, 0.5625f, 1.f}));
  // dX = 2 X dY, with dY the loss weights.
  std::vector<float> dy = Fetch<float>(ws, "Y_grad");
  std::vector<float> dx = Fetch<float>(ws, "X_grad");
  ASSERT_EQ(dx.size(), 6u);
  EXPECT_FLOAT_EQ(dx[2], 4.f * dy[2]);
}

TEST(GradientCheckerTest, ToleranceDecidesHowWrongIsWrong) {
  Workspace ws;
  Feed<float>(&ws, "X", {2}, {0.001f, -0.002f});  // gradient 2x*w: tiny, so missing 2 is tiny too
  GradientCheckOptions options;
  options.step = 1e-4f;
  EXPECT_TRUE(
      CheckGradient(ParseOp(R"(type: "TestWrongSquare" input: "X" output: "Y")"), &ws, options));
  options.tolerance = 1e-6f;
  EXPECT_FALSE(
      CheckGradient(ParseOp(R"(type: "TestWrongSquare" input: "X" output: "Y")"), &ws, options));
}

TEST(GradientCheckerTest, FailsWithoutAMaker) {
  Workspace ws;
  FeedX(&ws);
  ::testing::AssertionResult result =
      CheckGradient(ParseOp(R"(type: "TestSquareNoMaker" input: "X" output: "Y")"), &ws);
  ASSERT_FALSE(result);
  EXPECT_TRUE(Contains(result.message(),
                       "no gradient maker is registered for op type "
                       "TestSquareNoMaker"))
      << result.message();
}

TEST(GradientCheckerTest, FailsWhenTheMakerGivesNoGradientToCheck) {
  Workspace ws;
  FeedX(&ws);
  const OperatorDef op = ParseOp(R"(type: "TestSquareNoGradient" input: "X" output: "Y")");
  ::testing::AssertionResult all = CheckGradient(op, &ws);
  ASSERT_FALSE(all);
  EXPECT_TRUE(Contains(all.message(), "no input")) << all.message();
  GradientCheckOptions options;
  options.inputs = {0};
  ::testing::AssertionResult named = CheckGradient(op, &ws, options);
  ASSERT_FALSE(named);
  EXPECT_TRUE(Contains(named.message(), "gives no gradient for input 0 'X'")) << named.message();
}

TEST(GradientCheckerTest, NamesAnInputThatWasNeverFed) {
  Workspace ws;
  ::testing::AssertionResult result =
      CheckGradient(ParseOp(R"(type: "TestSquare" input: "missing" output: "Y")"), &ws);
  ASSERT_FALSE(result);
  EXPECT_TRUE(Contains(result.message(), "'missing'")) << result.message();
}

TEST(GradientCheckerTest, SameSeedSameWeights) {
  Workspace a, b;
  FeedX(&a);
  FeedX(&b);
  const OperatorDef op = ParseOp(R"(type: "TestSquare" input: "X" output: "Y")");
  ASSERT_TRUE(CheckGradient(op, &a));
  ASSERT_TRUE(CheckGradient(op, &b));
  EXPECT_EQ(Fetch<float>(a, "Y_grad"), Fetch<float>(b, "Y_grad"));
  GradientCheckOptions options;
  options.seed = 2;
  ASSERT_TRUE(CheckGradient(op, &b, options));
  EXPECT_NE(Fetch<float>(a, "Y_grad"), Fetch<float>(b, "Y_grad"));
}

}  // namespace
}  // namespace braid::test
