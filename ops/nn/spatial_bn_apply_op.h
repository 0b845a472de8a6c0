// SpatialBNApply: batch normalization with given statistics, optionally followed by a ReLU, for
// recomputing a training-mode SpatialBN's output from its input and saved batch statistics (see
// runtime/models/recompute.h), or of a SpatialBN whose output a Sum adds to a residual (a ResNet
// block's output). An elementwise op (PyTorch calls it batch_norm_elemt).
//
//   inputs:  X [N, C, spatial...], scale [C], bias [C], mean [C], inv_std [C], optional
//            residual (X's shape)
//   output:  Y = (X - mean) * inv_std * scale + bias (+ residual), then max(Y, 0) when relu=1
//   Args: relu (0).   Y may be X or the residual (in place).
//
// Layouts (runtime/core/tensor.h): X and the residual in either layout, Y blocked when
// blocked_outputs asks. When all three agree it is one pass in memory order; otherwise element by
// element (slower, and not in place).
//
// With a training SpatialBN's saved_mean and saved_inv_var it gives that op's Y to within a few
// float32 roundings (oneDNN orders the arithmetic its own way). It has no gradient: it is meant
// for the backward pass.
//
//   type: "SpatialBNApply" input: "X" input: "s" input: "b" input: "saved_mean"
//   input: "saved_inv_var" output: "Y_recomputed" arg { name: "relu" i: 1 }
#ifndef BRAID_OPS_NN_SPATIAL_BN_APPLY_OP_H_
#define BRAID_OPS_NN_SPATIAL_BN_APPLY_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class SpatialBNApplyOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_NN_SPATIAL_BN_APPLY_OP_H_
