// RoIAlign: bilinearly sampled, average-pooled features of regions of interest (Mask R-CNN;
// Caffe2's RoIAlign, torchvision.ops.roi_align), NCHW float32.
//
//   X [N, C, H, W], RoIs [R, 5] rows [batch_index, x1, y1, x2, y2] (or [R, 4] rows
//   [x1, y1, x2, y2] when N == 1), in input-image pixels  ->  Y [R, C, pooled_h, pooled_w]
//
// A RoI scaled by spatial_scale (and shifted by -0.5 when aligned) is cut into pooled_h x pooled_w
// bins; each bin averages a grid of sampling_ratio x sampling_ratio bilinear samples at the grid
// cells' centres (adaptive, ceil(roi_h / pooled_h) x ceil(roi_w / pooled_w), when sampling_ratio
// <= 0). A sample outside [-1, H] x [-1, W] counts as 0; inside, coordinates below 0 read row
// (column) 0 and those past H - 1 (W - 1) read the last.
//
// Arguments, Caffe2's names and defaults: spatial_scale 1 (> 0), pooled_h 1, pooled_w 1 (>= 1),
// sampling_ratio -1 (-1 or 0: adaptive), aligned 0 (0: Caffe2's legacy, the RoI's width and height
// taken as at least 1; 1: pixel centres at +0.5, as torchvision aligned=True, a RoI of negative
// size refused), order NCHW (NHWC refused). Refused: RoI batch indices that are not integers in
// [0, N), non-finite RoI coordinates.
//
//   type: "RoIAlign" input: "features" input: "rois" output: "pooled"
//   arg { name: "spatial_scale" f: 0.0625 } arg { name: "pooled_h" i: 7 }
//   arg { name: "pooled_w" i: 7 } arg { name: "sampling_ratio" i: 2 }
//
// RoIAlignGradient: inputs X (for its shape), RoIs, dY; output dX, each sample's dY / count
// spread back over its four pixels with its bilinear weights. RoIs get no gradient.
#ifndef BRAID_OPS_DETECTION_ROI_ALIGN_OP_H_
#define BRAID_OPS_DETECTION_ROI_ALIGN_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class RoIAlignOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

class RoIAlignGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_DETECTION_ROI_ALIGN_OP_H_
