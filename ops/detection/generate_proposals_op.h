// GenerateProposals: the region proposals of a Faster R-CNN RPN head (Caffe2's GenerateProposals,
// Detectron's GenerateProposalsOp), float32, NCHW.
//
//   scores [N, A, H, W], bbox_deltas [N, 4 * A, H, W] (anchor a's [dx, dy, dw, dh] at channels
//   4a..4a+3), im_info [N, 3] rows [height, width, scale], anchors [A, 4] rows [x1, y1, x2, y2]
//   ->  rois [R, 5] rows [image, x1, y1, x2, y2], rois_probs [R]
//
// Per image, as Detectron: anchor a at feature cell (h, w) is anchors[a] shifted by
// (w, h) / spatial_scale; candidates are enumerated in (h, w, a) order and sorted by descending
// score (equal scores keep that order); the first pre_nms_topN (all when <= 0) are decoded with
// weights [1, 1, 1, 1] (ops/detection/boxes.h DecodeBox), clipped to [0, int(width) -
// legacy_plus_one] x [0, int(height) - legacy_plus_one], kept when both sides (x2 - x1 +
// legacy_plus_one) are >= min_size * scale and the centre (x1 + side / 2) lies inside width x
// height; then greedy NMS at nms_thresh (IoU above it suppresses) keeps at most post_nms_topN
// (all when <= 0). rois lists image 0's proposals, then image 1's..., each in descending score.
// The number of rows depends on the data, so shape inference leaves rois and rois_probs unknown.
//
// Arguments, Caffe2's names and defaults: spatial_scale 1/16 (> 0), pre_nms_topN 6000,
// post_nms_topN 300, nms_thresh 0.7 (>= 0), min_size 16 (>= 0), legacy_plus_one 1,
// correct_transform_coords (ops/detection/box_args.h), angle_bound_on, angle_bound_lo,
// angle_bound_hi, clip_angle_thresh (checked, no effect on axis-aligned boxes). Refused: rotated
// anchors (A, 5), NaN scores, non-finite or non-positive im_info. No gradient.
#ifndef BRAID_OPS_DETECTION_GENERATE_PROPOSALS_OP_H_
#define BRAID_OPS_DETECTION_GENERATE_PROPOSALS_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class GenerateProposalsOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_DETECTION_GENERATE_PROPOSALS_OP_H_
