// MaxPoolGradient and AveragePoolGradient: the gradients of MaxPool and AveragePool
// (ops/nn/pool_op.h) on oneDNN, with Caffe2's inputs and outputs:
//
//   X [N, C, H, W], Y [N, C, outH, outW], dY (Y's shape)  ->  dX (X's shape)
//
// The arguments are the forward op's (the gradient maker copies them).
//
// MaxPoolGradient recomputes the forward pooling (oneDNN forward_training) to get the workspace
// that oneDNN's backward needs (the position of each window's maximum), instead of keeping that
// workspace in the forward op. The cost is one more forward pooling per backward (cheap next to
// the convolutions around it); the gain is no state shared between the forward and the gradient
// op, which may run on different threads, in different nets, or with the forward re-run between.
// A window's gradient goes to its first maximum (oneDNN's rule); Caffe2's CPU kernel gives it to
// every element equal to the maximum, so the two differ only on ties. Y is checked for its shape
// but otherwise unused.
#ifndef BRAID_OPS_NN_POOL_GRADIENT_OP_H_
#define BRAID_OPS_NN_POOL_GRADIENT_OP_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "ops/nn/dnnl_util.h"
#include "ops/nn/pool_op.h"
#include "runtime/core/operator.h"

namespace braid {

// The shapes of a pooling gradient op `def` with inputs X, Y, dY; throws braid::Error naming the
// blobs when Y or dY is not the shape the forward op produces.
PoolShapes ComputePoolGradientShapes(const OperatorDef& def, const std::vector<ShapeInfo>& in,
                                     PoolKind kind);

class PoolGradientOp : public OperatorBase {
 public:
  PoolGradientOp(const OperatorDef& def, Workspace* ws, PoolKind kind)
      : OperatorBase(def, ws), kind_(kind) {}
  void Run() override;

 private:
  struct Plan {
    DnnlPrimitive forward;  // max pooling only: recomputes the workspace
    DnnlPrimitive backward;
    dnnl::memory::desc src, dst, workspace;  // the primitives' (X's layout)
    LayoutBridge diff_dst, diff_src;          // dY's and dX's layouts to and from it
  };
  void Prepare();

  const PoolKind kind_;
  std::vector<std::vector<int64_t>> prepared_dims_;
  PoolShapes shapes_;
  std::shared_ptr<const Plan> plan_;
  dnnl::memory src_;
  ScratchLayout scratch_;  // with the recomputed forward's dst and workspace
  BoundTensor diff_dst_, diff_src_;
  BoundPrimitive forward_, backward_;
};

class MaxPoolGradientOp final : public PoolGradientOp {
 public:
  MaxPoolGradientOp(const OperatorDef& def, Workspace* ws)
      : PoolGradientOp(def, ws, PoolKind::kMax) {}
};

class AveragePoolGradientOp final : public PoolGradientOp {
 public:
  AveragePoolGradientOp(const OperatorDef& def, Workspace* ws)
      : PoolGradientOp(def, ws, PoolKind::kAverage) {}
};

}  // namespace braid

#endif  // BRAID_OPS_NN_POOL_GRADIENT_OP_H_
