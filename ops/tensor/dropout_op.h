// Dropout: zeroes each element with probability `ratio` (default 0.5) and scales the rest by
// 1 / (1 - ratio), float32 (Caffe2's Dropout).
//
//   is_test = 0 (default): Y[i] = X[i] * mask[i] / (1 - ratio), mask[i] kept with probability
//                          1 - ratio; the mask output (bool, X's shape) is required.
//   is_test = 1:           Y = X; a mask output, if given, is all true.
// ratio must lie in [0, 1]; ratio = 1 drops everything (Y = 0). Y may be X (in place). The mask
// is drawn from the op's rng() (OperatorBase): the same `seed` (or output name) gives the same
// masks, run after run of a fresh net, whatever the schedule.
//
// DropoutGrad (Caffe2's name): (dY, mask) -> dX = dY * mask / (1 - ratio); with is_test = 1,
// (dY) -> dX = dY. dX may be dY.
#ifndef BRAID_OPS_TENSOR_DROPOUT_OP_H_
#define BRAID_OPS_TENSOR_DROPOUT_OP_H_

#include <vector>

#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

// Shared by the CPU and CUDA kernels: the `is_test` argument; the `ratio` argument (throws
// braid::Error outside [0, 1]); the scale of kept elements, 1 / (1 - ratio), 0 for ratio 1; and
// DropoutGrad's shape inference (throws naming the inputs that do not fit).
bool DropoutIsTest(const OperatorDef& def);
float DropoutRatio(const OperatorDef& def);
float DropoutKeptScale(float ratio);
std::vector<ShapeInfo> InferDropoutGradShape(const OperatorDef& def,
                                             const std::vector<ShapeInfo>& in);

class DropoutOp final : public OperatorBase {
 public:
  DropoutOp(const OperatorDef& def, Workspace* ws);
  void Run() override;

 private:
  float ratio_;
  bool is_test_;
};

class DropoutGradOp final : public OperatorBase {
 public:
  DropoutGradOp(const OperatorDef& def, Workspace* ws);
  void Run() override;

 private:
  float ratio_;
  bool is_test_;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_DROPOUT_OP_H_
