#include "ops/detection/boxes.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace braid::detection {

float BoxXformClip() { return static_cast<float>(std::log(1000.0 / 16.0)); }

float BoxArea(const Box& b, float plus_one) {
  return (b.x2 - b.x1 + plus_one) * (b.y2 - b.y1 + plus_one);
}

float IoU(const Box& a, const Box& b, float plus_one) {
  const float w = std::max(0.f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1) + plus_one);
  const float h = std::max(0.f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1) + plus_one);
  const float intersection = w * h;
  return intersection / (BoxArea(a, plus_one) + BoxArea(b, plus_one) - intersection);
}

Box DecodeBox(const Box& box, const float* delta, const BoxDecoder& decoder) {
  const float clip = BoxXformClip();
  const float width = box.x2 - box.x1 + decoder.plus_one;
  const float height = box.y2 - box.y1 + decoder.plus_one;
  const float center_x = box.x1 + 0.5f * width;
  const float center_y = box.y1 + 0.5f * height;
  const float dx = delta[0] / decoder.weights[0];
  const float dy = delta[1] / decoder.weights[1];
  const float dw = std::min(delta[2] / decoder.weights[2], clip);
  const float dh = std::min(delta[3] / decoder.weights[3], clip);
  const float new_center_x = dx * width + center_x;
  const float new_center_y = dy * height + center_y;
  const float new_width = std::exp(dw) * width;
  const float new_height = std::exp(dh) * height;
  return {new_center_x - 0.5f * new_width, new_center_y - 0.5f * new_height,
          new_center_x + 0.5f * new_width - decoder.end_offset,
          new_center_y + 0.5f * new_height - decoder.end_offset};
}

Box ClipBox(const Box& b, int64_t height, int64_t width, float plus_one) {
  const float max_x = static_cast<float>(width) - plus_one;
  const float max_y = static_cast<float>(height) - plus_one;
  const auto clamp = [](float v, float hi) { return std::max(std::min(v, hi), 0.f); };
  return {clamp(b.x1, max_x), clamp(b.y1, max_y), clamp(b.x2, max_x), clamp(b.y2, max_y)};
}

std::vector<int> AllIndices(int64_t n) {
  std::vector<int> indices(static_cast<size_t>(n));
  std::iota(indices.begin(), indices.end(), 0);
  return indices;
}

std::vector<int> OrderByScore(const float* scores, std::vector<int> indices) {
  std::stable_sort(indices.begin(), indices.end(),
                   [scores](int a, int b) { return scores[a] > scores[b]; });
  return indices;
}

std::vector<int> Nms(const BoxList& boxes, const std::vector<int>& candidates, float thresh,
                     int64_t max_keep, float plus_one) {
  std::vector<int> kept;
  std::vector<Box> kept_boxes;
  for (int i : candidates) {
    if (max_keep >= 0 && static_cast<int64_t>(kept.size()) >= max_keep) break;
    const Box box = boxes[i];
    bool suppressed = false;
    for (const Box& k : kept_boxes) {
      if (!(IoU(k, box, plus_one) <= thresh)) {
        suppressed = true;
        break;
      }
    }
    if (suppressed) continue;
    kept.push_back(i);
    kept_boxes.push_back(box);
  }
  return kept;
}

std::vector<int> SoftNms(const BoxList& boxes, std::vector<float>* scores,
                         const std::vector<int>& candidates, const SoftNmsOptions& options,
                         float plus_one) {
  std::vector<float>& s = *scores;
  std::vector<int> kept;
  std::vector<int> pending = candidates;
  while (!pending.empty()) {
    size_t best = 0;
    for (size_t p = 1; p < pending.size(); ++p) {
      if (s[pending[p]] > s[pending[best]]) best = p;
    }
    std::swap(pending[0], pending[best]);
    const int top = pending[0];
    kept.push_back(top);
    const Box top_box = boxes[top];
    std::vector<int> rest;
    for (size_t p = 1; p < pending.size(); ++p) {
      const int i = pending[p];
      const float iou = IoU(top_box, boxes[i], plus_one);
      const float weight = options.gaussian               ? std::exp(-iou * iou / options.sigma)
                           : iou > options.overlap_thresh ? 1.f - iou
                                                          : 1.f;
      s[i] *= weight;
      if (s[i] >= options.min_score) rest.push_back(i);
    }
    pending = std::move(rest);
  }
  return kept;
}

}  // namespace braid::detection
