// Axis-aligned box arithmetic shared by the Detectron ops (GenerateProposals, BBoxTransform,
// BoxWithNMSLimit): area and IoU, decoding regression deltas, clipping to an image, greedy and soft
// non-maximum suppression, ordering by score. The formulas are Detectron's
// (detectron/utils/boxes.py, cython_nms.pyx) as Caffe2 computes them, in float32.
//
// A box is [x1, y1, x2, y2] in pixels. `plus_one` is Caffe2's `legacy_plus_one` as a number: 1
// treats corners as inclusive pixel indices (width = x2 - x1 + 1, clipping to width - 1), 0 as
// continuous coordinates (width = x2 - x1, clipping to width).
//
//   BoxList boxes{data, 4};                         // box i at data + 4 * i
//   std::vector<int> order = OrderByScore(scores, AllIndices(n));
//   std::vector<int> kept = Nms(boxes, order, 0.7f, 300, 1.f);
//
// Pure functions; thread-safe.
#ifndef BRAID_OPS_DETECTION_BOXES_H_
#define BRAID_OPS_DETECTION_BOXES_H_

#include <array>
#include <cstdint>
#include <vector>

namespace braid::detection {

struct Box {
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;
};

// A strided view of boxes: box i is the four floats at data + i * stride.
struct BoxList {
  const float* data = nullptr;
  int64_t stride = 4;

  Box operator[](int64_t i) const {
    const float* p = data + i * stride;
    return {p[0], p[1], p[2], p[3]};
  }
};

// log(1000 / 16): the largest log-space width / height delta DecodeBox applies (Detectron's
// BBOX_XFORM_CLIP), so that no decoded box grows more than 1000 / 16 times.
float BoxXformClip();

float BoxArea(const Box& b, float plus_one);
// Intersection over union; Caffe2's rounding: (w * h) / (area_a + area_b - w * h) in float32.
float IoU(const Box& a, const Box& b, float plus_one);

// How DecodeBox applies deltas [dx, dy, dw, dh] (each divided by its weight):
//   w = x2 - x1 + plus_one, cx = x1 + w / 2; cx' = dx * w + cx; w' = exp(min(dw, clip)) * w
//   x1' = cx' - w' / 2,  x2' = cx' + w' / 2 - end_offset   (y alike)
// end_offset is plus_one in Caffe2 today; nets made before `legacy_plus_one` existed set it with
// `correct_transform_coords` (0: 0 with plus_one 1).
struct BoxDecoder {
  std::array<float, 4> weights{1.f, 1.f, 1.f, 1.f};
  float plus_one = 1.f;
  float end_offset = 1.f;
};
Box DecodeBox(const Box& box, const float* delta, const BoxDecoder& decoder);

// Each coordinate clamped to [0, width - plus_one] (x) or [0, height - plus_one] (y).
Box ClipBox(const Box& b, int64_t height, int64_t width, float plus_one);

// 0, 1, ..., n - 1.
std::vector<int> AllIndices(int64_t n);
// `indices` sorted by descending scores[i]; equal scores keep their order in `indices`.
std::vector<int> OrderByScore(const float* scores, std::vector<int> indices);

// Greedy NMS: walks `candidates` in order (highest priority first) and keeps a box unless its IoU
// with an already kept box is above `thresh` (an IoU that is NaN suppresses, as in Caffe2). Stops
// after `max_keep` boxes when max_keep >= 0. Returns the kept indices in the order kept.
std::vector<int> Nms(const BoxList& boxes, const std::vector<int>& candidates, float thresh,
                     int64_t max_keep, float plus_one);

// Soft NMS (Bodla et al. 2017, as Detectron): repeatedly keeps the pending box of highest score
// (the first in pending order among equals) and scales the others' scores by a weight of their
// IoU with it: linear, 1 - IoU where IoU > overlap_thresh (else 1); gaussian, exp(-IoU^2 / sigma).
// Boxes whose score falls below min_score leave. `scores` (indexed like boxes) is updated in place.
struct SoftNmsOptions {
  bool gaussian = false;
  float sigma = 0.5f;
  float overlap_thresh = 0.3f;
  float min_score = 0.001f;
};
std::vector<int> SoftNms(const BoxList& boxes, std::vector<float>* scores,
                         const std::vector<int>& candidates, const SoftNmsOptions& options,
                         float plus_one);

}  // namespace braid::detection

#endif  // BRAID_OPS_DETECTION_BOXES_H_
