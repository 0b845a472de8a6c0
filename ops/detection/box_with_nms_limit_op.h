// BoxWithNMSLimit: per-class NMS and a per-image detection limit over Fast R-CNN's class scores
// and boxes (Caffe2's BoxWithNMSLimit, Detectron's box_results_with_nms_and_limit), float32.
//
//   scores [R, C] (or [R, C, 1, 1]), boxes [R, 4 * C] (or [R, 4] with cls_agnostic_bbox_reg,
//   [R, 4 * (C - 1)] with input_boxes_include_bg_cls 0), optional batch_splits [B] (float32 or
//   int32: rows per image, summing to R)
//   ->  scores [n], boxes [n, 4], classes [n] (float32), optional batch_splits [B] (float32),
//       keeps [n] (int32: each detection's row within its image), keeps_size [B, C] (int32: kept
//       per class, class 0 always 0)
//
// Per image, for each class j = 1..C-1 (0 is background: scores column j, or j - 1 when
// input_boxes_include_bg_cls is 0): rows with score > score_thresh, ordered by descending score
// (equal scores by row), then greedy NMS at `nms` (IoU above it suppresses) keeping at most
// detections_per_im; or, with soft_nms_enabled, soft NMS (ops/detection/boxes.h SoftNms) whose
// decayed scores are the ones output. When more than detections_per_im (> 0) survive over all
// classes, the highest scores are kept (equal scores by class, then NMS order). Output order:
// image by image, class by class ascending, within a class in NMS order (after a limit: by score).
// classes holds j, or j - 1 when output_classes_include_bg_cls is 0. The number of detections
// depends on the data: shape inference knows only batch_splits and keeps_size.
//
// Arguments, Caffe2's names and defaults: score_thresh 0.05, nms 0.3 (>= 0), detections_per_im 100
// (<= 0: no limit), soft_nms_enabled 0, soft_nms_method "linear" (or "gaussian"), soft_nms_sigma
// 0.5 (> 0), soft_nms_min_score_thres 0.001, rotated 0 (1 refused), cls_agnostic_bbox_reg 0,
// input_boxes_include_bg_cls 1, output_classes_include_bg_cls 1, legacy_plus_one 1. Outputs: 3,
// 4 or 6 (5 refused). Refused: batch_splits that are not whole numbers >= 0 summing to R. No
// gradient.
#ifndef BRAID_OPS_DETECTION_BOX_WITH_NMS_LIMIT_OP_H_
#define BRAID_OPS_DETECTION_BOX_WITH_NMS_LIMIT_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class BoxWithNMSLimitOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_DETECTION_BOX_WITH_NMS_LIMIT_OP_H_
