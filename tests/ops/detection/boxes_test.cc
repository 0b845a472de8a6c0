// ops/detection/boxes.h: IoU with and without the legacy +1, decoding a known delta, the log-space
// clip, clipping, score order, greedy and soft NMS on hand-computed cases.
#include "ops/detection/boxes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace braid::detection {
namespace {

TEST(BoxesTest, IoUCountsPixelsWithPlusOne) {
  const Box a{0, 0, 9, 9}, b{5, 5, 14, 14};
  // +1: areas 100, intersection 5 x 5; continuous: areas 81, intersection 4 x 4.
  EXPECT_FLOAT_EQ(IoU(a, b, 1.f), 25.f / 175.f);
  EXPECT_FLOAT_EQ(IoU(a, b, 0.f), 16.f / 146.f);
  EXPECT_FLOAT_EQ(IoU(a, Box{20, 20, 30, 30}, 1.f), 0.f);
  EXPECT_FLOAT_EQ(BoxArea(a, 1.f), 100.f);
}

TEST(BoxesTest, DecodesAKnownDelta) {
  // Width 10, centre 5; dx 0.1 moves the centre by 1, dw ln 2 doubles the width.
  const float delta[4] = {0.1f, 0.2f, std::log(2.f), 0.f};
  const Box d = DecodeBox({0, 0, 9, 9}, delta, BoxDecoder{});
  EXPECT_FLOAT_EQ(d.x1, -4.f);
  EXPECT_FLOAT_EQ(d.x2, 15.f);  // 6 + 10 - 1
  EXPECT_FLOAT_EQ(d.y1, 2.f);
  EXPECT_FLOAT_EQ(d.y2, 11.f);
  // Weights divide the deltas: [10, 10, 5, 5] with 10x / 5x deltas give the same box.
  BoxDecoder weighted;
  weighted.weights = {10.f, 10.f, 5.f, 5.f};
  const float scaled[4] = {1.f, 2.f, 5 * std::log(2.f), 0.f};
  const Box w = DecodeBox({0, 0, 9, 9}, scaled, weighted);
  EXPECT_FLOAT_EQ(w.x1, -4.f);
  EXPECT_FLOAT_EQ(w.y2, 11.f);
  // Continuous coordinates: width 9, no -1 at the end.
  BoxDecoder continuous;
  continuous.plus_one = continuous.end_offset = 0.f;
  const float zero[4] = {0, 0, 0, 0};
  const Box c = DecodeBox({0, 0, 9, 9}, zero, continuous);
  EXPECT_FLOAT_EQ(c.x1, 0.f);
  EXPECT_FLOAT_EQ(c.x2, 9.f);
}

TEST(BoxesTest, ClipsLogScaleAt1000Over16) {
  EXPECT_FLOAT_EQ(BoxXformClip(), static_cast<float>(std::log(62.5)));
  const float delta[4] = {0.f, 0.f, 10.f, 0.f};
  const Box d = DecodeBox({0, 0, 9, 9}, delta, BoxDecoder{});
  EXPECT_NEAR(d.x2 - d.x1 + 1, 625.f, 1e-3f);  // 10 * 62.5
}

TEST(BoxesTest, ClipsToTheImage) {
  const Box c = ClipBox({-3, 2, 40, 50}, 30, 20, 1.f);
  EXPECT_EQ(c.x1, 0.f);
  EXPECT_EQ(c.y1, 2.f);
  EXPECT_EQ(c.x2, 19.f);
  EXPECT_EQ(c.y2, 29.f);
  EXPECT_EQ(ClipBox({-3, 2, 40, 50}, 30, 20, 0.f).x2, 20.f);
}

TEST(BoxesTest, OrderByScoreIsStableForTies) {
  const float scores[5] = {0.5f, 0.9f, 0.5f, 0.1f, 0.9f};
  EXPECT_EQ(OrderByScore(scores, AllIndices(5)), (std::vector<int>{1, 4, 0, 2, 3}));
  EXPECT_EQ(OrderByScore(scores, {3, 2, 0}), (std::vector<int>{2, 0, 3}));
}

TEST(BoxesTest, NmsKeepsTheHigherOfTwoOverlappingBoxes) {
  // Boxes 0 and 1 overlap with IoU 81 / 119 (about 0.68); box 2 is apart.
  const std::vector<float> data{0, 0, 9, 9, 1, 1, 10, 10, 50, 50, 60, 60};
  const BoxList boxes{data.data(), 4};
  EXPECT_EQ(Nms(boxes, {1, 0, 2}, 0.5f, -1, 1.f), (std::vector<int>{1, 2}));
  EXPECT_EQ(Nms(boxes, {0, 1, 2}, 0.5f, -1, 1.f), (std::vector<int>{0, 2}));
  // IoU is not above 0.7: both stay. max_keep stops early.
  EXPECT_EQ(Nms(boxes, {0, 1, 2}, 0.7f, -1, 1.f), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(Nms(boxes, {0, 1, 2}, 0.7f, 2, 1.f), (std::vector<int>{0, 1}));
  // A strided view (boxes of class 1 in rows of two classes).
  const std::vector<float> rows{0, 0, 1, 1, 0, 0, 9, 9, 0, 0, 1, 1, 1, 1, 10, 10};
  EXPECT_EQ(Nms(BoxList{rows.data() + 4, 8}, {0, 1}, 0.5f, -1, 1.f), (std::vector<int>{0}));
}

TEST(BoxesTest, SoftNmsDecaysOverlappingScores) {
  const std::vector<float> data{0, 0, 9, 9, 0, 0, 9, 4, 50, 50, 60, 60};
  const BoxList boxes{data.data(), 4};
  const float iou = 50.f / 100.f;  // box 1 is the top half of box 0
  SoftNmsOptions linear;
  linear.overlap_thresh = 0.3f;
  std::vector<float> scores{0.9f, 0.8f, 0.7f};
  EXPECT_EQ(SoftNms(boxes, &scores, {0, 1, 2}, linear, 1.f), (std::vector<int>{0, 2, 1}));
  EXPECT_FLOAT_EQ(scores[1], 0.8f * (1 - iou));
  EXPECT_FLOAT_EQ(scores[2], 0.7f);

  SoftNmsOptions gaussian;
  gaussian.gaussian = true;
  gaussian.sigma = 0.5f;
  gaussian.min_score = 0.5f;  // 0.8 * exp(-0.25 / 0.5) = 0.485: dropped
  scores = {0.9f, 0.8f, 0.7f};
  EXPECT_EQ(SoftNms(boxes, &scores, {0, 1, 2}, gaussian, 1.f), (std::vector<int>{0, 2}));
  EXPECT_NEAR(scores[1], 0.8f * std::exp(-iou * iou / 0.5f), 1e-6f);
}

}  // namespace
}  // namespace braid::detection
