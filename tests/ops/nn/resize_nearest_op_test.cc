// ResizeNearest and ResizeNearestGradient: a hand-computed upsampling, integer and fractional
// scales against the index rule, errors, numerical gradients.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;

std::string ResizeOp(float height_scale, float width_scale) {
  return R"(type: "ResizeNearest" input: "X" output: "Y" arg { name: "height_scale" f: )" +
         std::to_string(height_scale) + R"( } arg { name: "width_scale" f: )" +
         std::to_string(width_scale) + " }";
}

std::vector<float> Random(int64_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<float> v(count);
  for (float& x : v) x = uniform(rng);
  return v;
}

TEST(ResizeNearestOpTest, DoublesByCopyingEachPixel) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 1, 2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(RunOp(&ws, ResizeOp(2, 2)));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{1, 1, 4, 4}));
  EXPECT_EQ(Fetch<float>(ws, "Y"),
            (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
}

TEST(ResizeNearestOpTest, DefaultScalesCopy) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 1, 1, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(RunOp(&ws, R"(type: "ResizeNearest" input: "X" output: "Y")"));
  EXPECT_EQ(Fetch<float>(ws, "Y"), Fetch<float>(ws, "X"));
}

TEST(ResizeNearestOpTest, FractionalScalesFollowTheIndexRule) {
  const int64_t n = 2, c = 3, h = 5, w = 4;
  for (const auto& [hs, ws_scale] :
       {std::pair{1.5f, 0.5f}, std::pair{3.f, 1.7f}, std::pair{0.4f, 2.5f}}) {
    SCOPED_TRACE(ResizeOp(hs, ws_scale));
    Workspace ws;
    Feed<float>(&ws, "X", {n, c, h, w}, Random(n * c * h * w, 4));
    ASSERT_TRUE(RunOp(&ws, ResizeOp(hs, ws_scale)));
    const int64_t oh = static_cast<int64_t>(h * hs), ow = static_cast<int64_t>(w * ws_scale);
    ASSERT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{n, c, oh, ow}));
    const std::vector<float> x = Fetch<float>(ws, "X");
    const std::vector<float> y = Fetch<float>(ws, "Y");
    for (int64_t p = 0; p < n * c; ++p) {
      for (int64_t r = 0; r < oh; ++r) {
        for (int64_t col = 0; col < ow; ++col) {
          const int64_t sr = std::min<int64_t>(static_cast<int64_t>(r / hs), h - 1);
          const int64_t sc = std::min<int64_t>(static_cast<int64_t>(col / ws_scale), w - 1);
          EXPECT_EQ(y[(p * oh + r) * ow + col], x[(p * h + sr) * w + sc]);
        }
      }
    }
  }
}

TEST(ResizeNearestOpTest, GradientSumsTheCopies) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 1, 2, 2}, {0, 0, 0, 0});
  Feed<float>(&ws, "dY", {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  // Scale 1.5: rows 0, 1 copy row 0 and row 2 copies row 1 (int(2 / 1.5) = 1); columns alike.
  ASSERT_TRUE(RunOp(&ws, R"(type: "ResizeNearestGradient" input: "dY" input: "X" output: "dX"
      arg { name: "height_scale" f: 1.5 } arg { name: "width_scale" f: 1.5 })"));
  EXPECT_EQ(Fetch<float>(ws, "dX"), (std::vector<float>{1 + 2 + 4 + 5, 3 + 6, 7 + 8, 9}));
}

TEST(ResizeNearestOpTest, GradientMatchesFiniteDifferences) {
  for (const auto& [hs, ws_scale] : {std::pair{2.f, 2.f}, std::pair{1.5f, 0.5f}}) {
    SCOPED_TRACE(ResizeOp(hs, ws_scale));
    Workspace ws;
    Feed<float>(&ws, "X", {2, 2, 3, 4}, Random(48, 8));
    EXPECT_TRUE(CheckGradient(ParseOp(ResizeOp(hs, ws_scale)), &ws));
  }
}

TEST(ResizeNearestOpTest, BadArgumentsAndInputsAreNamed) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 1, 2, 2}, {1, 2, 3, 4});
  Feed<float>(&ws, "X3", {1, 2, 2}, {1, 2, 3, 4});
  Feed<float>(&ws, "dY", {1, 1, 3, 3}, std::vector<float>(9));
  const auto expect = [&ws](const std::string& op, const std::string& part) {
    const std::string infer = InferError(ws, op);
    EXPECT_NE(infer.find(part), std::string::npos) << infer;
    EXPECT_NE(RunOpError(&ws, op).find(part), std::string::npos) << op;
  };
  expect(ResizeOp(0.f, 2.f), "height_scale 0.000000 and width_scale 2.000000 must be > 0");
  expect(R"(type: "ResizeNearest" input: "X3" output: "Y")", "X 'X3' float32[1,2,2] must be");
  expect(R"(type: "ResizeNearest" input: "X" output: "Y" arg { name: "order" s: "NHWC" })",
         "order 'NHWC' is not supported");
  expect(R"(type: "ResizeNearestGradient" input: "dY" input: "X" output: "dX"
      arg { name: "height_scale" f: 2 } arg { name: "width_scale" f: 2 })",
         "dY 'dY' float32[1,1,3,3] must be float32[1,1,4,4]");
}

}  // namespace
}  // namespace braid::test
