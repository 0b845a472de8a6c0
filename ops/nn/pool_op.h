// MaxPool and AveragePool: 2-D pooling of NCHW float32 tensors on oneDNN (Caffe2's ops).
//
//   X [N, C, H, W]  ->  Y [N, C, outH, outW]
//
// Window arguments (kernel, stride, pad, legacy_pad, global_pooling, order) are described in
// ops/nn/conv_pool_window.h; pooling takes no dilation and needs pad < kernel.
// AveragePool follows Caffe2's `count_include_pad` argument (default 0): by default a window's sum
// is divided by the number of its elements inside the image (padding excluded, oneDNN's
// pooling_avg_exclude_padding); with count_include_pad=1 by the full kernel area
// (pooling_avg_include_padding), also for the windows legacy_pad CAFFE_LEGACY_POOLING adds past
// the image (Caffe2's divisors).
//
//   type: "MaxPool" input: "X" output: "Y"
//   arg { name: "kernel" i: 2 } arg { name: "stride" i: 2 }
//
// Gradients: MaxPoolGradient and AveragePoolGradient (ops/nn/pool_gradient_op.h). Pooling is
// memory-bound, so it runs on X's layout, plain or blocked (runtime/core/tensor.h), and reorders
// only a Y asked in the other layout (blocked_outputs). Primitives are cached per shape, window,
// algorithm and layouts in PrimitiveCache (ops/nn/dnnl_util.h).
#ifndef BRAID_OPS_NN_POOL_OP_H_
#define BRAID_OPS_NN_POOL_OP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/nn/conv_pool_window.h"
#include "ops/nn/dnnl_util.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

enum class PoolKind { kMax, kAverage };

struct PoolShapes {
  ConvPoolWindow window;
  dnnl::algorithm algorithm = dnnl::algorithm::pooling_max;
  std::vector<int64_t> x_dims, y_dims;
  // Tensor layouts, set by the op: X (the primitive's layout) and Y for pooling; X, dY and dX for
  // the gradients.
  Layout x_layout = Layout::kPlain, y_layout = Layout::kPlain, dx_layout = Layout::kPlain;

  // Identifies the pooling (algorithm, shapes, window, layouts) in PrimitiveCache keys.
  std::string Key(const std::string& kind) const;
};

// The shapes of pooling op `def` over X `x`; throws braid::Error naming X for a bad window.
PoolShapes ComputePoolShapes(const OperatorDef& def, const ShapeInfo& x, PoolKind kind);

// oneDNN's forward pooling descriptor for `s`, src and dst in X's layout.
dnnl::pooling_forward::primitive_desc MakePoolForwardDesc(const PoolShapes& s,
                                                          dnnl::prop_kind prop_kind);

class PoolOp : public OperatorBase {
 public:
  PoolOp(const OperatorDef& def, Workspace* ws, PoolKind kind)
      : OperatorBase(def, ws), kind_(kind) {}
  void Run() override;

 private:
  struct Plan {
    DnnlPrimitive pool;
    dnnl::memory::desc src;
    LayoutBridge dst;
  };

  void Prepare();

  const PoolKind kind_;
  std::vector<int64_t> prepared_dims_;
  PoolShapes shapes_;
  std::shared_ptr<const Plan> plan_;
  dnnl::memory src_;
  ScratchLayout scratch_;
  BoundTensor dst_;
  BoundPrimitive pool_;
};

class MaxPoolOp final : public PoolOp {
 public:
  MaxPoolOp(const OperatorDef& def, Workspace* ws) : PoolOp(def, ws, PoolKind::kMax) {}
};

class AveragePoolOp final : public PoolOp {
 public:
  AveragePoolOp(const OperatorDef& def, Workspace* ws) : PoolOp(def, ws, PoolKind::kAverage) {}
};

}  // namespace braid

#endif  // BRAID_OPS_NN_POOL_OP_H_
