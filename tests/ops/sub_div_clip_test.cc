// Sub, Div and Clip: values against hand-computed results, Caffe2's legacy broadcast, in-place
// use, errors naming the blobs, and their gradients against finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
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

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Values in [0.5, 1.5] with a random sign: safe divisors, away from Clip's bounds at 0 and +-2.
std::vector<float> RandomValues(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> magnitude(0.5f, 1.5f);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (rng() % 2 ? 1 : -1) * magnitude(rng);
  return v;
}

void FeedRandom(Workspace* ws, const std::string& name, std::vector<int64_t> dims, uint64_t seed) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  Feed<float>(ws, name, std::move(dims), RandomValues(seed, n));
}

TEST(SubTest, SameShapeAndBroadcastFromAxis) {
  Workspace ws;
  Feed<float>(&ws, "A", {2, 3}, {1, 2, 3, 4, 5, 6});
  Feed<float>(&ws, "B", {2, 3}, {6, 5, 4, 3, 2, 1});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Sub" input: "A" input: "B" output: "C")"));
  EXPECT_EQ(Fetch<float>(ws, "C"), (std::vector<float>{-5, -3, -1, 1, 3, 5}));
  Feed<float>(&ws, "row", {3}, {1, 2, 3});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Sub" input: "A" input: "row" output: "C"
                            arg { name: "broadcast" i: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "C"), (std::vector<float>{0, 0, 0, 3, 3, 3}));
  Feed<float>(&ws, "col", {2}, {1, 2});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Sub" input: "A" input: "col" output: "C"
                            arg { name: "broadcast" i: 1 } arg { name: "axis" i: 0 })"));
  EXPECT_EQ(Fetch<float>(ws, "C"), (std::vector<float>{0, 1, 2, 2, 3, 4}));
}

TEST(SubTest, IntegersAndInPlace) {
  Workspace ws;
  Feed<int64_t>(&ws, "A", {3}, {10, 20, 30});
  Feed<int64_t>(&ws, "B", {3}, {1, 2, 3});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Sub" input: "A" input: "B" output: "B")"));
  EXPECT_EQ(Fetch<int64_t>(ws, "B"), (std::vector<int64_t>{9, 18, 27}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Sub" input: "A" input: "B" output: "A")"));
  EXPECT_EQ(Fetch<int64_t>(ws, "A"), (std::vector<int64_t>{1, 2, 3}));
}

TEST(SubTest, MismatchedShapesNameBothBlobs) {
  Workspace ws;
  Feed<float>(&ws, "A", {2, 3}, std::vector<float>(6, 0));
  Feed<float>(&ws, "B", {2}, {1, 2});
  const std::string op = R"(type: "Sub" input: "A" input: "B" output: "C")";
  EXPECT_TRUE(Contains(RunOpError(&ws, op), "'A' float32[2,3] and 'B' float32[2]"));
  EXPECT_TRUE(Contains(InferError(ws, op), "must have one shape"));
}

TEST(SubGradientTest, MatchesFiniteDifferencesPlainAndBroadcast) {
  Workspace ws;
  FeedRandom(&ws, "A", {2, 3, 4}, 1);
  FeedRandom(&ws, "B", {2, 3, 4}, 2);
  FeedRandom(&ws, "b", {3}, 3);
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Sub" input: "A" input: "B" output: "C")"), &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Sub" input: "A" input: "b" output: "C"
      arg { name: "broadcast" i: 1 } arg { name: "axis" i: 1 })"),
                            &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Sub" input: "A" input: "B" output: "A")"), &ws));
}

TEST(SubGradientTest, NegatesAndSumsDBAndRunsInPlace) {
  Workspace ws;
  Feed<float>(&ws, "dC", {2, 2}, {1, 2, 3, 4});
  Feed<float>(&ws, "B", {2}, {0, 0});
  ASSERT_TRUE(RunOp(&ws, R"(type: "SubGradient" input: "dC" input: "B" output: "dC" output: "dB"
                            arg { name: "broadcast" i: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "dC"), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(Fetch<float>(ws, "dB"), (std::vector<float>{-4, -6}));
}

TEST(DivTest, FloatsBroadcastAndInPlace) {
  Workspace ws;
  Feed<float>(&ws, "A", {2, 2}, {1, 2, 3, 4});
  Feed<float>(&ws, "B", {2, 2}, {2, 4, 1, 8});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Div" input: "A" input: "B" output: "C")"));
  EXPECT_EQ(Fetch<float>(ws, "C"), (std::vector<float>{0.5, 0.5, 3, 0.5}));
  Feed<float>(&ws, "col", {2, 1}, {2, 4});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Div" input: "A" input: "col" output: "A"
                            arg { name: "broadcast" i: 1 } arg { name: "axis" i: 0 })"));
  EXPECT_EQ(Fetch<float>(ws, "A"), (std::vector<float>{0.5, 1, 0.75, 1}));
  Feed<float>(&ws, "Z", {2, 2}, {1, -1, 0, 1});
  Feed<float>(&ws, "zeros", {2, 2}, {0, 0, 0, 1});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Div" input: "Z" input: "zeros" output: "Q")"));
  const std::vector<float> q = Fetch<float>(ws, "Q");
  EXPECT_EQ(q[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(q[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(q[2]));
}

TEST(DivTest, IntegersTruncateTowardZeroAndRefuseAZeroDivisor) {
  Workspace ws;
  Feed<int32_t>(&ws, "A", {5}, {7, -7, 7, -7, std::numeric_limits<int32_t>::min()});
  Feed<int32_t>(&ws, "B", {5}, {2, 2, -2, -2, -1});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Div" input: "A" input: "B" output: "C")"));
  EXPECT_EQ(Fetch<int32_t>(ws, "C"),
            (std::vector<int32_t>{3, -3, -3, 3, std::numeric_limits<int32_t>::min()}));
  Feed<int64_t>(&ws, "I", {3}, {1, 2, 3});
  Feed<int64_t>(&ws, "Zero", {3}, {1, 0, 1});
  const std::string error = RunOpError(&ws, R"(type: "Div" input: "I" input: "Zero" output: "C")");
  EXPECT_TRUE(Contains(error, "input 'Zero' int64[3] holds 0 at element 1")) << error;
}

TEST(DivGradientTest, MatchesFiniteDifferencesPlainBroadcastAndInPlaceOfA) {
  Workspace ws;
  FeedRandom(&ws, "A", {2, 3, 4}, 4);
  FeedRandom(&ws, "B", {2, 3, 4}, 5);
  FeedRandom(&ws, "b", {3, 4}, 6);
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Div" input: "A" input: "B" output: "C")"), &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Div" input: "A" input: "b" output: "C"
      arg { name: "broadcast" i: 1 })"),
                            &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Div" input: "A" input: "B" output: "A")"), &ws));
}

TEST(DivGradientTest, HandComputedAndRefusedInPlaceOfB) {
  Workspace ws;
  Feed<float>(&ws, "C", {2}, {3, 0.5});  // A = [6, 2], B = [2, 4]
  Feed<float>(&ws, "B", {2}, {2, 4});
  Feed<float>(&ws, "dC", {2}, {1, 2});
  ASSERT_TRUE(RunOp(&ws, R"(type: "DivGradient" input: "C" input: "B" input: "dC"
                            output: "dA" output: "dB")"));
  EXPECT_EQ(Fetch<float>(ws, "dA"), (std::vector<float>{0.5, 0.5}));
  EXPECT_EQ(Fetch<float>(ws, "dB"), (std::vector<float>{-1.5, -0.25}));
  const OperatorDef op = ParseOp(R"(type: "Div" input: "A" input: "B" output: "B")");
  try {
    (*FindGradientMaker("Div"))(GradientRequest{op, {"B_grad"}, {"A_grad", "B_grad_in"}});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.status().message(), "in place of its input B 'B'"));
  }
}

TEST(ClipTest, ClampsDefaultsAndInPlace) {
  Workspace ws;
  Feed<float>(&ws, "X", {5}, {-2, -0.5, 0.25, 1, 3});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Clip" input: "X" output: "Y"
                            arg { name: "min" f: -1 } arg { name: "max" f: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{-1, -0.5, 0.25, 1, 1}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Clip" input: "X" output: "Y" arg { name: "min" f: 0 })"));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{0, 0, 0.25, 1, 3}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Clip" input: "X" output: "X" arg { name: "max" f: 0 })"));
  EXPECT_EQ(Fetch<float>(ws, "X"), (std::vector<float>{-2, -0.5, 0, 0, 0}));
}

TEST(ClipTest, RefusesMinAboveMaxAndIntegers) {
  Workspace ws;
  Feed<float>(&ws, "X", {1}, {0});
  const std::string op = R"(type: "Clip" input: "X" output: "Y"
                            arg { name: "min" f: 2 } arg { name: "max" f: 1 })";
  EXPECT_TRUE(Contains(InferError(ws, op), "argument 'min' = 2.000000 must not exceed"));
  EXPECT_TRUE(Contains(RunOpError(&ws, op), "must not exceed argument 'max' = 1.000000"));
  Feed<int32_t>(&ws, "I", {1}, {0});
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "Clip" input: "I" output: "Y")"),
                       "input 'I' int32[1] must be float32"));
}

TEST(ClipGradientTest, PassesDYStrictlyInsideTheBounds) {
  Workspace ws;
  Feed<float>(&ws, "Y", {4}, {-1, 0, 0.5, 1});
  Feed<float>(&ws, "dY", {4}, {1, 2, 3, 4});
  ASSERT_TRUE(RunOp(&ws, R"(type: "ClipGradient" input: "Y" input: "dY" output: "dY"
                            arg { name: "min" f: -1 } arg { name: "max" f: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "dY"), (std::vector<float>{0, 2, 3, 0}));
}

TEST(ClipGradientTest, MatchesFiniteDifferencesAlsoInPlace) {
  Workspace ws;
  // |x| in [0.5, 1.5]: max 0.2 clips every positive value, min -1.7 none, and no value lies
  // within the checker's step of a bound.
  FeedRandom(&ws, "X", {3, 5}, 7);
  const std::string clip = R"(arg { name: "min" f: -1.7 } arg { name: "max" f: 0.2 })";
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Clip" input: "X" output: "Y" )" + clip), &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Clip" input: "X" output: "X" )" + clip), &ws));
}

}  // namespace
}  // namespace braid::test
