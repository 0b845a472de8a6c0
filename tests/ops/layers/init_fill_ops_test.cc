// XavierFill and MSRAFill: the fan-in, the range and moments of the samples, seeding, and shapes
// from an input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "ops/layers/layer_test_util.h"

namespace braid::test {
namespace {

TEST(XavierFillTest, UniformWithinSqrtThreeOverFanIn) {
  Workspace ws;
  ASSERT_TRUE(
      RunOp(&ws, R"(type: "XavierFill" output: "W" arg { name: "shape" ints: 50 ints: 40 })"));
  const std::vector<float> w = Fetch<float>(ws, "W");
  const float scale = std::sqrt(3.f / 40);
  EXPECT_LE(*std::max_element(w.begin(), w.end()), scale);
  EXPECT_GE(*std::min_element(w.begin(), w.end()), -scale);
  EXPECT_NEAR(Mean(w), 0, 0.01);
  EXPECT_NEAR(StdDev(w), scale / std::sqrt(3.f), 0.01);  // 1 / sqrt(fan_in)
}

TEST(MSRAFillTest, GaussianWithVarianceTwoOverFanIn) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "MSRAFill" output: "W"
                            arg { name: "shape" ints: 64 ints: 8 ints: 3 ints: 3 })"));
  const std::vector<float> w = Fetch<float>(ws, "W");
  EXPECT_NEAR(Mean(w), 0, 0.01);
  EXPECT_NEAR(StdDev(w), std::sqrt(2.0 / 72), 0.01);
}

TEST(InitFillTest, SameSeedSameValuesAndShapeFromTheInput) {
  for (const std::string type : {"XavierFill", "MSRAFill"}) {
    Workspace ws;
    Feed<float>(&ws, "like", {3, 4}, std::vector<float>(12, 0));
    const std::string args = R"(arg { name: "seed" i: 5 })";
    ASSERT_TRUE(RunOp(&ws, "type: \"" + type + "\" input: \"like\" output: \"a\" " + args));
    ASSERT_TRUE(RunOp(&ws, "type: \"" + type + "\" input: \"like\" output: \"b\" " + args));
    EXPECT_EQ(ShapeOf(ws, "a"), (std::vector<int64_t>{3, 4})) << type;
    EXPECT_EQ(Fetch<float>(ws, "a"), Fetch<float>(ws, "b")) << type;
    EXPECT_NE(Fetch<float>(ws, "a"), std::vector<float>(12, 0)) << type;
  }
}

TEST(InitFillTest, ScalarShapeHasNoFanInAndEmptyShapesAreFine) {
  Workspace ws;
  const std::string scalar = R"(type: "MSRAFill" output: "s")";
  EXPECT_TRUE(Contains(RunOpError(&ws, scalar), "cannot fill scalar 's'"));
  EXPECT_TRUE(Contains(InferError(ws, scalar), "cannot fill scalar 's'"));
  ASSERT_TRUE(
      RunOp(&ws, R"(type: "XavierFill" output: "e" arg { name: "shape" ints: 0 ints: 3 })"));
  EXPECT_EQ(ShapeOf(ws, "e"), (std::vector<int64_t>{0, 3}));
}

}  // namespace
}  // namespace braid::test
