// BBoxTransform: hand-decoded boxes over two images with their scales (apply_scale on and off),
// weights, legacy_plus_one and correct_transform_coords, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/op_test_util.h"

namespace braid::test {
namespace {

void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-4f) << i;
}

// Two RoIs (images 0 and 1), two classes each.
void FeedTwoImages(Workspace* ws) {
  Feed<float>(ws, "rois", {2, 5}, {0, 0, 0, 9, 9, 1, 10, 10, 29, 29});
  const float ln2 = std::log(2.f), ln10 = std::log(10.f);
  Feed<float>(ws, "deltas", {2, 8},
              {0, 0, 0, 0, 0.1f, 0.2f, ln2, 0,  //
               0, 0, 0, 0, 0, 0, 0, ln10});
  Feed<float>(ws, "im_info", {2, 3}, {20, 30, 1, 100, 100, 2});
}

const char kOp[] = R"(type: "BBoxTransform" input: "rois" input: "deltas" input: "im_info"
    output: "boxes" output: "splits" )";

TEST(BBoxTransformOpTest, DecodesClipsAndRescalesPerImage) {
  Workspace ws;
  FeedTwoImages(&ws);
  ASSERT_TRUE(RunOp(&ws, kOp));
  // Image 0 (20 x 30, scale 1): class 1 decodes to [-4, 2, 15, 11], x1 clipped to 0.
  // Image 1 (scale 2): the RoI is [5, 5, 14.5, 14.5] in the original image (width 10.5, centre
  // 10.25); class 1's height grows 10x to 105: y from -42.25 (clipped to 0) to 61.75 (clipped to
  // int(100 / 2 + 0.5) - 1 = 49); then everything times 2.
  ExpectNear(Fetch<float>(ws, "boxes"), {0, 0, 9, 9, 0, 2, 15, 11, 10, 10, 29, 29, 10, 0, 29, 98});
  EXPECT_EQ(Fetch<float>(ws, "splits"), (std::vector<float>{1, 1}));
  ASSERT_TRUE(RunOp(&ws, std::string(kOp) + R"(arg { name: "apply_scale" i: 0 })"));
  ExpectNear(Fetch<float>(ws, "boxes"),
             {0, 0, 9, 9, 0, 2, 15, 11, 5, 5, 14.5f, 14.5f, 5, 0, 14.5f, 49});
}

TEST(BBoxTransformOpTest, WeightsAndPlusOneConventions) {
  Workspace ws;
  Feed<float>(&ws, "rois", {1, 4}, {0, 0, 9, 9});
  Feed<float>(&ws, "deltas", {1, 4}, {1, 2, 5 * std::log(2.f), 0});
  Feed<float>(&ws, "im_info", {1, 3}, {100, 100, 1});
  const std::string op = R"(type: "BBoxTransform" input: "rois" input: "deltas"
      input: "im_info" output: "boxes" arg { name: "weights" floats: [10, 10, 5, 5] } )";
  ASSERT_TRUE(RunOp(&ws, op));
  ExpectNear(Fetch<float>(ws, "boxes"), {0, 2, 15, 11});  // x1 -4 clipped
  // Caffe2 before legacy_plus_one: width + 1 but x2 / y2 not reduced by 1.
  ASSERT_TRUE(RunOp(&ws, op + R"(arg { name: "correct_transform_coords" i: 0 })"));
  ExpectNear(Fetch<float>(ws, "boxes"), {0, 2, 16, 12});
  ASSERT_TRUE(RunOp(&ws, op + R"(arg { name: "correct_transform_coords" i: 1 })"));
  ExpectNear(Fetch<float>(ws, "boxes"), {0, 2, 15, 11});
  // Continuous coordinates: width 9, centre 4.5 -> 5.4, width 18; height 9, centre 6.3.
  ASSERT_TRUE(RunOp(&ws, op + R"(arg { name: "legacy_plus_one" i: 0 })"));
  ExpectNear(Fetch<float>(ws, "boxes"), {0, 1.8f, 14.4f, 10.8f});
}

TEST(BBoxTransformOpTest, NoRoIsGiveEmptyOutputs) {
  Workspace ws;
  Feed<float>(&ws, "rois", {0, 5}, {});
  Feed<float>(&ws, "deltas", {0, 8}, {});
  Feed<float>(&ws, "im_info", {2, 3}, {10, 10, 1, 10, 10, 1});
  ASSERT_TRUE(RunOp(&ws, kOp));
  EXPECT_EQ(ShapeOf(ws, "boxes"), (std::vector<int64_t>{0, 8}));
  EXPECT_EQ(Fetch<float>(ws, "splits"), (std::vector<float>{0, 0}));
}

TEST(BBoxTransformOpTest, BadArgumentsAndInputsAreNamed) {
  Workspace ws;
  FeedTwoImages(&ws);
  Feed<float>(&ws, "rois4", {2, 4}, std::vector<float>(8));
  Feed<float>(&ws, "deltas3", {2, 3}, std::vector<float>(6));
  Feed<float>(&ws, "rois_bad", {1, 5}, {2, 0, 0, 1, 1});
  Feed<float>(&ws, "deltas1", {1, 4}, std::vector<float>(4));
  Feed<float>(&ws, "im_nan", {2, 3}, {20, 30, 1, 100, std::nanf(""), 2});
  const std::string op = kOp;
  ExpectInferAndRunFail(&ws, op + R"(arg { name: "rotated" i: 1 })", "BBoxTransform: rotated 1");
  ExpectInferAndRunFail(&ws, op + R"(arg { name: "weights" floats: [1, 1, 1] })",
                        "weights has 3 values");
  ExpectInferAndRunFail(&ws, op + R"(arg { name: "weights" floats: [1, 1, 0, 1] })",
                        "must be finite and > 0");
  ExpectInferAndRunFail(&ws, op + R"(arg { name: "apply_scale" i: 3 })",
                        "apply_scale 3 must be 0 or 1");
  ExpectInferAndRunFail(
      &ws,
      op + R"(arg { name: "legacy_plus_one" i: 0 } arg { name: "correct_transform_coords" i: 1 })",
      "contradicts legacy_plus_one 0");
  ExpectInferAndRunFail(&ws, op + R"(arg { name: "angle_bound_hi" i: 100 })",
                        "positive multiple of 180");
  ExpectInferAndRunFail(&ws,
                        R"(type: "BBoxTransform" input: "rois4" input: "deltas" input: "im_info"
      output: "boxes")",
                        "rois 'rois4' float32[2,4] must be float32 (R, 5)");
  ExpectInferAndRunFail(&ws,
                        R"(type: "BBoxTransform" input: "rois" input: "deltas3" input: "im_info"
      output: "boxes")",
                        "deltas 'deltas3' float32[2,3] must be float32 (2, 4 * classes)");
  ExpectInferAndRunFail(&ws, R"(type: "BBoxTransform" input: "rois" input: "deltas" input: "deltas"
      output: "boxes")",
                        "im_info 'deltas' float32[2,8] must be float32 (N, 3)");
  ExpectRunFails(&ws, R"(type: "BBoxTransform" input: "rois_bad" input: "deltas1" input: "im_info"
      output: "boxes")",
                 "rois 'rois_bad' row 0 has batch index 2.000000; im_info has images 0..1");
  ExpectRunFails(&ws, R"(type: "BBoxTransform" input: "rois" input: "deltas" input: "im_nan"
      output: "boxes")",
                 "im_info 'im_nan' row 1");
}

}  // namespace
}  // namespace braid::test
