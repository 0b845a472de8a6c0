// BBoxTransform: applies box regression deltas to RoIs and clips the boxes to their images
// (Caffe2's BBoxTransform, Detectron's bbox_transform + clip_tiled_boxes), float32.
//
//   rois [R, 5] rows [batch_index, x1, y1, x2, y2] (or [R, 4] when N == 1),
//   deltas [R, 4 * K] rows [dx, dy, dw, dh] per class, im_info [N, 3] rows [height, width, scale]
//   ->  box_out [R, 4 * K], optional roi_batch_splits [N] (float32: RoIs per image)
//
// Per RoI of image n: box = roi / scale; for each class k, decode delta k (ops/detection/boxes.h
// DecodeBox, dw and dh clipped at log(1000 / 16)); clip to [0, int(height / scale + 0.5) -
// legacy_plus_one] x [0, int(width / scale + 0.5) - legacy_plus_one]; multiply by scale when
// apply_scale. Each row uses its own image's im_info (rows need not be grouped by image).
//
// Arguments, Caffe2's names and defaults: weights [1, 1, 1, 1] (4 values, each > 0; Detectron's
// Fast R-CNN head uses [10, 10, 5, 5]), apply_scale 1 (0: boxes stay in the original image's
// pixels), legacy_plus_one 1, correct_transform_coords (see ops/detection/box_args.h), rotated 0
// (1 refused), angle_bound_on, angle_bound_lo, angle_bound_hi, clip_angle_thresh (checked, no
// effect on axis-aligned boxes). Refused: batch indices not integers in [0, N), non-finite or
// non-positive im_info. No gradient.
#ifndef BRAID_OPS_DETECTION_BBOX_TRANSFORM_OP_H_
#define BRAID_OPS_DETECTION_BBOX_TRANSFORM_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class BBoxTransformOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_DETECTION_BBOX_TRANSFORM_OP_H_
