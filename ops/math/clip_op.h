// Clip: Y = min(max(X, min), max) elementwise, float32 (Caffe2's Clip). Arguments `min` (default:
// the lowest float) and `max` (default: the largest float); min > max is refused. Y may be X.
//
// ClipGradient: inputs Y, dY (with the forward op's arguments); dX = dY where min < Y < max, else
// 0. It reads Y, not X, so an in-place Clip keeps its gradient; dX may be dY.
//
//   X [-2, 0.5, 3], min = 0, max = 1   -> Y [0, 0.5, 1], dX = [0, dY[1], 0]
#ifndef BRAID_OPS_MATH_CLIP_OP_H_
#define BRAID_OPS_MATH_CLIP_OP_H_

#include "runtime/core/operator.h"

namespace braid {

struct ClipBounds {
  float min;
  float max;
};

// The bounds of Clip or ClipGradient op `def`; throws braid::Error when min > max.
ClipBounds ClipBoundsOf(const OperatorDef& def);

class ClipOp final : public OperatorBase {
 public:
  ClipOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws), bounds_(ClipBoundsOf(def)) {}
  void Run() override;

 private:
  ClipBounds bounds_;
};

class ClipGradientOp final : public OperatorBase {
 public:
  ClipGradientOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws), bounds_(ClipBoundsOf(def)) {}
  void Run() override;

 private:
  ClipBounds bounds_;
};

}  // namespace braid

#endif  // BRAID_OPS_MATH_CLIP_OP_H_
