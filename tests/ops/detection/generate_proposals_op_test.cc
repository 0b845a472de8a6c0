// GenerateProposals: hand-computed proposals for anchors shifted over a small feature map (the
// (H, W, A) order, score sort, decoding, clipping, min_size, NMS, top-N limits, batches), errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/op_test_util.h"

namespace braid::test {
namespace {

std::string ProposalsOp(const std::string& args = "") {
  return R"(type: "GenerateProposals" input: "scores" input: "deltas" input: "im_info"
      input: "anchors" output: "rois" output: "probs" )" +
         args;
}

void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-4f) << i;
}

// One 16 x 16 anchor over a 2 x 2 feature map of stride 16 (the default spatial_scale 1/16).
void FeedGrid(Workspace* ws, std::vector<float> scores, std::vector<float> im_info) {
  Feed<float>(ws, "scores", {1, 1, 2, 2}, scores);
  Feed<float>(ws, "deltas", {1, 4, 2, 2}, std::vector<float>(16, 0.f));
  Feed<float>(ws, "im_info", {1, 3}, im_info);
  Feed<float>(ws, "anchors", {1, 4}, {0, 0, 15, 15});
}

TEST(GenerateProposalsOpTest, ShiftsAnchorsOverTheMapAndSortsByScore) {
  Workspace ws;
  FeedGrid(&ws, {0.1f, 0.4f, 0.3f, 0.2f}, {64, 64, 1});
  ASSERT_TRUE(RunOp(&ws, ProposalsOp(), /*allow_unknown=*/true));
  // Cell (h, w) shifts the anchor by (16 w, 16 h); zero deltas decode to the anchor itself.
  EXPECT_EQ(Fetch<float>(ws, "rois"), (std::vector<float>{0, 16, 0,  31, 15,  // (0, 1): 0.4
                                                          0, 0,  16, 15, 31,  // (1, 0): 0.3
                                                          0, 16, 16, 31, 31,  // (1, 1): 0.2
                                                          0, 0,  0,  15, 15}));
  EXPECT_EQ(Fetch<float>(ws, "probs"), (std::vector<float>{0.4f, 0.3f, 0.2f, 0.1f}));
  // pre_nms_topN keeps the best two candidates; post_nms_topN the best three after NMS.
  ASSERT_TRUE(RunOp(&ws, ProposalsOp(R"(arg { name: "pre_nms_topN" i: 2 })"), true));
  EXPECT_EQ(Fetch<float>(ws, "probs"), (std::vector<float>{0.4f, 0.3f}));
  ASSERT_TRUE(RunOp(&ws, ProposalsOp(R"(arg { name: "post_nms_topN" i: 3 })"), true));
  EXPECT_EQ(Fetch<float>(ws, "probs"), (std::vector<float>{0.4f, 0.3f, 0.2f}));
}

TEST(GenerateProposalsOpTest, ClipsFiltersSmallBoxesAndSuppressesOverlaps) {
  Workspace ws;
  // The image is 20 x 24: cells of row 1 are clipped to y2 = 19 (height 4 < min_size 16).
  FeedGrid(&ws, {0.1f, 0.4f, 0.3f, 0.2f}, {20, 24, 1});
  ASSERT_TRUE(RunOp(&ws, ProposalsOp(), true));
  // (0, 1) is clipped to x2 = 23 (width 8): only (0, 0) stays.
  EXPECT_EQ(Fetch<float>(ws, "rois"), (std::vector<float>{0, 0, 0, 15, 15}));
  ASSERT_TRUE(RunOp(&ws, ProposalsOp(R"(arg { name: "min_size" f: 4 })"), true));
  EXPECT_EQ(Fetch<float>(ws, "rois"), (std::vector<float>{0, 16, 0,  23, 15, 0, 0, 16, 15, 19,
                                                          0, 16, 16, 23, 19, 0, 0, 0,  15, 15}));
  // min_size is in original-image pixels: scale 2 makes it 32, more than any box.
  FeedGrid(&ws, {0.1f, 0.4f, 0.3f, 0.2f}, {64, 64, 2});
  ASSERT_TRUE(RunOp(&ws, ProposalsOp(), true));
  EXPECT_EQ(ShapeOf(ws, "rois"), (std::vector<int64_t>{0, 5}));
  EXPECT_EQ(ShapeOf(ws, "probs"), (std::vector<int64_t>{0}));

  // Two anchors on one cell, 8 pixels apart (IoU 8 * 16 / (2 * 256 - 128) = 1/3).
  Feed<float>(&ws, "scores", {1, 2, 1, 1}, {0.6f, 0.9f});
  Feed<float>(&ws, "deltas", {1, 8, 1, 1}, std::vector<float>(8, 0.f));
  Feed<float>(&ws, "im_info", {1, 3}, {64, 64, 1});
  Feed<float>(&ws, "anchors", {2, 4}, {0, 0, 15, 15, 8, 0, 23, 15});
  ASSERT_TRUE(RunOp(&ws, ProposalsOp(R"(arg { name: "nms_thresh" f: 0.3 })"), true));
  EXPECT_EQ(Fetch<float>(ws, "rois"), (std::vector<float>{0, 8, 0, 23, 15}));
  ASSERT_TRUE(RunOp(&ws, ProposalsOp(), true));  // 1/3 is not above 0.7
  EXPECT_EQ(Fetch<float>(ws, "probs"), (std::vector<float>{0.9f, 0.6f}));
}

TEST(GenerateProposalsOpTest, DecodesDeltasPerAnchorAndImage) {
  Workspace ws;
  // Two images, one cell, one anchor [0, 0, 15, 15] (width 16, centre 8).
  Feed<float>(&ws, "scores", {2, 1, 1, 1}, {0.5f, 0.7f});
  // Image 0: dx 0.25 moves the centre to 12; image 1: dh ln 2 doubles the height around 8.
  Feed<float>(&ws, "deltas", {2, 4, 1, 1}, {0.25f, 0, 0, 0, 0, 0, 0, std::log(2.f)});
  Feed<float>(&ws, "im_info", {2, 3}, {64, 64, 1, 64, 64, 1});
  Feed<float>(&ws, "anchors", {1, 4}, {0, 0, 15, 15});
  ASSERT_TRUE(RunOp(&ws, ProposalsOp(), true));
  ExpectNear(Fetch<float>(ws, "rois"), {0, 4, 0, 19, 15, 1, 0, 0, 15, 23});
  EXPECT_EQ(Fetch<float>(ws, "probs"), (std::vector<float>{0.5f, 0.7f}));
  // legacy_plus_one 0: width 15, centre 7.5 -> 11.25; y: height 30 around 7.5, clipped at 0.
  // (min_size 8: the widths are now 15.)
  ASSERT_TRUE(RunOp(&ws, ProposalsOp(R"(arg { name: "legacy_plus_one" i: 0 }
      arg { name: "min_size" f: 8 })"),
                    true));
  ExpectNear(Fetch<float>(ws, "rois"), {0, 3.75f, 0, 18.75f, 15, 1, 0, 0, 15, 22.5f});
}

TEST(GenerateProposalsOpTest, BadArgumentsAndInputsAreNamed) {
  Workspace ws;
  FeedGrid(&ws, {0.1f, 0.4f, 0.3f, 0.2f}, {64, 64, 1});
  Feed<float>(&ws, "anchors5", {1, 5}, {0, 0, 16, 16, 0});
  Feed<float>(&ws, "deltas_bad", {1, 8, 2, 2}, std::vector<float>(32));
  Feed<float>(&ws, "im_zero", {1, 3}, {0, 64, 1});
  Feed<float>(&ws, "scores_nan", {1, 1, 2, 2}, {0.1f, std::nanf(""), 0.3f, 0.2f});
  ExpectInferAndRunFail(&ws, ProposalsOp(R"(arg { name: "spatial_scale" f: 0 })"),
                        "GenerateProposals: spatial_scale 0.000000 must be finite and > 0");
  ExpectInferAndRunFail(&ws, ProposalsOp(R"(arg { name: "nms_thresh" f: -1 })"),
                        "nms_thresh -1.000000");
  ExpectInferAndRunFail(&ws, ProposalsOp(R"(arg { name: "legacy_plus_one" i: 2 })"),
                        "legacy_plus_one 2");
  const std::string with = R"(type: "GenerateProposals" input: "scores" )";
  ExpectInferAndRunFail(
      &ws, with + R"(input: "deltas" input: "im_info" input: "anchors5" output: "r" output: "p")",
      "anchors 'anchors5' float32[1,5] are rotated boxes");
  ExpectInferAndRunFail(&ws,
                        with + R"(input: "deltas_bad" input: "im_info" input: "anchors" output: "r"
      output: "p")",
                        "bbox_deltas 'deltas_bad' float32[1,8,2,2] must be float32[1,4,2,2]");
  ExpectInferAndRunFail(&ws, with + R"(input: "deltas" input: "anchors" input: "anchors" output: "r"
      output: "p")",
                        "im_info 'anchors' float32[1,4] must be float32 (1, 3)");
  ExpectRunFails(&ws, with + R"(input: "deltas" input: "im_zero" input: "anchors" output: "r"
      output: "p")",
                 "im_info 'im_zero' row 0");
  ExpectRunFails(&ws,
                 R"(type: "GenerateProposals" input: "scores_nan" input: "deltas" input: "im_info"
      input: "anchors" output: "r" output: "p")",
                 "'scores_nan' float32[1,1,2,2] holds NaN");
}

}  // namespace
}  // namespace braid::test
