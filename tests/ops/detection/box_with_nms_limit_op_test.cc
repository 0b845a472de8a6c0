// BoxWithNMSLimit: hand-computed per-class NMS, the per-image limit, batches, background-class
// conventions, class-agnostic boxes, soft NMS, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "runtime/core/op_schema.h"

namespace braid::test {
namespace {

std::string NmsOp(const std::string& args = "", const std::string& inputs = "") {
  return R"(type: "BoxWithNMSLimit" input: "scores" input: "boxes" )" + inputs +
         R"(output: "s" output: "b" output: "c" output: "splits" output: "keeps"
            output: "keeps_size" )" +
         args;
}

// Three rows, classes background, 1, 2. Class 1: rows 0 and 1 overlap (IoU 0.68), row 2 scores
// under 0.05. Class 2: row 0 scores under 0.05, rows 1 and 2 apart.
void FeedThreeRows(Workspace* ws) {
  Feed<float>(ws, "scores", {3, 3}, {0.1f, 0.9f, 0.02f, 0.1f, 0.8f, 0.6f, 0.5f, 0.01f, 0.7f});
  Feed<float>(ws, "boxes", {3, 12}, {0, 0, 1, 1, 0,  0,  9,  9,  5,  5,  6,  6,  //
                                     0, 0, 1, 1, 1,  1,  10, 10, 0,  0,  9,  9,  //
                                     0, 0, 1, 1, 50, 50, 60, 60, 20, 20, 29, 29});
}

TEST(BoxWithNMSLimitOpTest, SuppressesPerClassAndSkipsBackground) {
  Workspace ws;
  FeedThreeRows(&ws);
  ASSERT_TRUE(RunOp(&ws, NmsOp(), /*allow_unknown=*/true));
  EXPECT_EQ(Fetch<float>(ws, "s"), (std::vector<float>{0.9f, 0.7f, 0.6f}));
  EXPECT_EQ(Fetch<float>(ws, "b"), (std::vector<float>{0, 0, 9, 9, 20, 20, 29, 29, 0, 0, 9, 9}));
  EXPECT_EQ(Fetch<float>(ws, "c"), (std::vector<float>{1, 2, 2}));
  EXPECT_EQ(Fetch<float>(ws, "splits"), (std::vector<float>{3}));
  EXPECT_EQ(Fetch<int32_t>(ws, "keeps"), (std::vector<int32_t>{0, 2, 1}));
  EXPECT_EQ(Fetch<int32_t>(ws, "keeps_size"), (std::vector<int32_t>{0, 1, 2}));
  // A looser threshold keeps class 1's row 1 too.
  ASSERT_TRUE(RunOp(&ws, NmsOp(R"(arg { name: "nms" f: 0.7 })"), true));
  EXPECT_EQ(Fetch<float>(ws, "s"), (std::vector<float>{0.9f, 0.8f, 0.7f, 0.6f}));
  // Classes numbered from the first foreground class.
  ASSERT_TRUE(RunOp(&ws, NmsOp(R"(arg { name: "output_classes_include_bg_cls" i: 0 })"), true));
  EXPECT_EQ(Fetch<float>(ws, "c"), (std::vector<float>{0, 1, 1}));
}

TEST(BoxWithNMSLimitOpTest, LimitsDetectionsPerImageByScore) {
  Workspace ws;
  FeedThreeRows(&ws);
  ASSERT_TRUE(RunOp(&ws, NmsOp(R"(arg { name: "detections_per_im" i: 2 })"), true));
  EXPECT_EQ(Fetch<float>(ws, "s"), (std::vector<float>{0.9f, 0.7f}));
  EXPECT_EQ(Fetch<float>(ws, "c"), (std::vector<float>{1, 2}));
  EXPECT_EQ(Fetch<int32_t>(ws, "keeps_size"), (std::vector<int32_t>{0, 1, 1}));
  ASSERT_TRUE(RunOp(&ws, NmsOp(R"(arg { name: "score_thresh" f: 0.65 })"), true));
  EXPECT_EQ(Fetch<float>(ws, "s"), (std::vector<float>{0.9f, 0.7f}));
}

TEST(BoxWithNMSLimitOpTest, SplitsImagesByBatchSplits) {
  for (const bool as_int : {false, true}) {
    Workspace ws;
    FeedThreeRows(&ws);
    if (as_int) {
      Feed<int32_t>(&ws, "batch", {2}, {1, 2});
    } else {
      Feed<float>(&ws, "batch", {2}, {1, 2});
    }
    ASSERT_TRUE(RunOp(&ws, NmsOp("", R"(input: "batch" )"), true));
    // Image 1 holds rows 1 and 2: class 1's row 1 no longer meets row 0.
    EXPECT_EQ(Fetch<float>(ws, "s"), (std::vector<float>{0.9f, 0.8f, 0.7f, 0.6f}));
    EXPECT_EQ(Fetch<float>(ws, "c"), (std::vector<float>{1, 1, 2, 2}));
    EXPECT_EQ(Fetch<float>(ws, "splits"), (std::vector<float>{1, 3}));
    EXPECT_EQ(Fetch<int32_t>(ws, "keeps"), (std::vector<int32_t>{0, 0, 1, 0}));
    EXPECT_EQ(Fetch<int32_t>(ws, "keeps_size"), (std::vector<int32_t>{0, 1, 0, 0, 1, 2}));
  }
}

TEST(BoxWithNMSLimitOpTest, ClassAgnosticAndForegroundOnlyBoxes) {
  Workspace ws;
  FeedThreeRows(&ws);
  // One box per row for every class.
  Feed<float>(&ws, "boxes", {3, 4}, {0, 0, 9, 9, 1, 1, 10, 10, 20, 20, 29, 29});
  ASSERT_TRUE(RunOp(&ws, NmsOp(R"(arg { name: "cls_agnostic_bbox_reg" i: 1 })"), true));
  EXPECT_EQ(Fetch<float>(ws, "s"), (std::vector<float>{0.9f, 0.7f, 0.6f}));
  EXPECT_EQ(Fetch<float>(ws, "b"), (std::vector<float>{0, 0, 9, 9, 20, 20, 29, 29, 1, 1, 10, 10}));
  // Boxes without a background column: class j's box at column j - 1 and score at column j - 1.
  Feed<float>(&ws, "boxes", {3, 8}, {0,  0,  9,  9,  5,  5,  6,  6, 1, 1, 10, 10, 0, 0, 9, 9,  //
                                     50, 50, 60, 60, 20, 20, 29, 29});
  ASSERT_TRUE(RunOp(&ws, NmsOp(R"(arg { name: "input_boxes_include_bg_cls" i: 0 })"), true));
  // Class 1 reads score column 0 (0.1, 0.1, 0.5): rows 2 then 0 (row 1 overlaps row 0);
  // class 2 reads column 1 (0.9, 0.8, 0.01): row 0 ([5,5,6,6]) and row 1.
  EXPECT_EQ(Fetch<float>(ws, "s"), (std::vector<float>{0.5f, 0.1f, 0.9f, 0.8f}));
  EXPECT_EQ(Fetch<int32_t>(ws, "keeps"), (std::vector<int32_t>{2, 0, 0, 1}));
}

TEST(BoxWithNMSLimitOpTest, SoftNmsOutputsDecayedScores) {
  Workspace ws;
  FeedThreeRows(&ws);
  ASSERT_TRUE(RunOp(&ws, NmsOp(R"(arg { name: "soft_nms_enabled" i: 1 })"), true));
  // Class 1's row 1 decays by 1 - IoU (IoU 81 / 119 > nms 0.3) but stays above 0.001.
  const float decayed = 0.8f * (1.f - 81.f / 119.f);
  const std::vector<float> s = Fetch<float>(ws, "s");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_FLOAT_EQ(s[0], 0.9f);
  EXPECT_NEAR(s[1], decayed, 1e-6f);
  EXPECT_EQ(Fetch<float>(ws, "c"), (std::vector<float>{1, 1, 2, 2}));
  ASSERT_TRUE(RunOp(&ws, NmsOp(R"(arg { name: "soft_nms_enabled" i: 1 }
      arg { name: "soft_nms_method" s: "gaussian" } arg { name: "soft_nms_min_score_thres" f: 0.5 })"),
                    true));
  // exp(-IoU^2 / 0.5) = 0.396: 0.8 * 0.396 falls under 0.5.
  EXPECT_EQ(Fetch<float>(ws, "s"), (std::vector<float>{0.9f, 0.7f, 0.6f}));
}

TEST(BoxWithNMSLimitOpTest, ThreeOutputsAndFourDimensionalInputs) {
  Workspace ws;
  FeedThreeRows(&ws);
  Feed<float>(&ws, "scores4", {3, 3, 1, 1}, Fetch<float>(ws, "scores"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "BoxWithNMSLimit" input: "scores4" input: "boxes"
      output: "s" output: "b" output: "c")",
                    true));
  EXPECT_EQ(Fetch<float>(ws, "s"), (std::vector<float>{0.9f, 0.7f, 0.6f}));
  EXPECT_EQ(ShapeOf(ws, "b"), (std::vector<int64_t>{3, 4}));
}

TEST(BoxWithNMSLimitOpTest, BadArgumentsAndInputsAreNamed) {
  Workspace ws;
  FeedThreeRows(&ws);
  Feed<float>(&ws, "boxes8", {3, 8}, std::vector<float>(24));
  Feed<float>(&ws, "batch_bad", {2}, {1, 1});
  Feed<float>(&ws, "batch_frac", {2}, {1.5f, 1.5f});
  ExpectInferAndRunFail(&ws, NmsOp(R"(arg { name: "rotated" i: 1 })"),
                        "BoxWithNMSLimit: rotated 1");
  ExpectInferAndRunFail(&ws, NmsOp(R"(arg { name: "soft_nms_method" s: "hard" })"),
                        "soft_nms_method 'hard' must be 'linear' or 'gaussian'");
  ExpectInferAndRunFail(&ws, NmsOp(R"(arg { name: "soft_nms_sigma" f: 0 })"),
                        "soft_nms_sigma 0.000000");
  ExpectInferAndRunFail(&ws, NmsOp(R"(arg { name: "nms" f: -0.5 })"),
                        "nms -0.500000 must be finite and >= 0");
  ExpectInferAndRunFail(
      &ws, R"(type: "BoxWithNMSLimit" input: "scores" input: "boxes" output: "s" output: "b"
      output: "c" output: "splits" output: "keeps")",
      "has 5 outputs");
  ExpectInferAndRunFail(
      &ws, R"(type: "BoxWithNMSLimit" input: "scores" input: "boxes8" output: "s" output: "b"
      output: "c")",
      "boxes 'boxes8' float32[3,8] must be float32[3,12]");
  // GenerateProposals' name for the threshold is not BoxWithNMSLimit's.
  EXPECT_EQ(FindSchema("BoxWithNMSLimit")
                ->VerifyArgs(ParseOp(NmsOp(R"(arg { name: "nms_thresh" f: 0.5 })")))
                .find("unknown argument 'nms_thresh'"),
            0u);
  ExpectRunFails(&ws, NmsOp("", R"(input: "batch_bad" )"), "batch_splits 'batch_bad' sums to 2");
  ExpectRunFails(&ws, NmsOp("", R"(input: "batch_frac" )"), "entry 0 is 1.500000");
}

}  // namespace
}  // namespace braid::test
