// SpatialBN: batch normalization over the channels of an NCHW float32 tensor on oneDNN (Caffe2's
// SpatialBN).
//
//   inputs:  X [N, C, spatial...], scale [C], bias [C], running_mean [C], running_var [C]
//   is_test=1: Y = scale * (X - running_mean) / sqrt(running_var + epsilon) + bias
//              outputs: Y
//   is_test=0 (training, the default): normalizes with the batch mean and (biased) variance over
//              N and the spatial dims.
//              outputs: Y, running_mean, running_var (in place: the same blobs as inputs 3 and 4),
//                       saved_mean, saved_inv_var = 1 / sqrt(batch_var + epsilon)
//              running = momentum * running + (1 - momentum) * batch, where the running variance
//              takes the unbiased batch variance (times m / (m - 1), m = N * spatial size), as
//              Caffe2 does.
//   Args: epsilon (1e-5), momentum (0.9), is_test (0), order (NCHW only).
// Y may be X (in place). The gradient (training mode only) is SpatialBNGradient
// (ops/nn/spatial_bn_gradient_op.h). X is given to oneDNN as NCHW, or [N, C, spatial size, 1] for
// other ranks. oneDNN's batch norm on the plain layout (ncsp_bnorm) is several times slower than
// its JIT kernel on channel-blocked data, reorders included (README, "Measurements behind the
// design"), so the op reorders into a blocked buffer (in the thread's scratch area,
// runtime/exec/scratch.h) and back where C is a multiple of the block, unless X is already blocked
// and Y asked blocked (runtime/core/tensor.h), when it reorders nothing. Inference runs a large
// batch in chunks of samples (BatchChunk), so that the blocked copy holds one chunk.
//
//   type: "SpatialBN" input: "X" input: "s" input: "b" input: "rm" input: "rv"
//   output: "Y" output: "rm" output: "rv" output: "saved_mean" output: "saved_inv_var"
#ifndef BRAID_OPS_NN_SPATIAL_BN_OP_H_
#define BRAID_OPS_NN_SPATIAL_BN_OP_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "ops/nn/dnnl_util.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

struct SpatialBnShapes {
  std::vector<int64_t> x_dims;
  int64_t channels = 0;
  int64_t spatial = 1;  // product of the dims after C
  // Tensor layouts, set by the op (not by ComputeSpatialBnShapes): X and Y for SpatialBN; X, dY
  // and dX for SpatialBNGradient.
  Layout x_layout = Layout::kPlain, y_layout = Layout::kPlain, dx_layout = Layout::kPlain;
  // X as oneDNN sees it: NCHW as it is (so that its blocked layout is a Conv's), other ranks as
  // [N, C, spatial, 1].
  dnnl::memory::dims DnnlDims() const {
    if (x_dims.size() == 4) return {x_dims[0], x_dims[1], x_dims[2], x_dims[3]};
    return {x_dims[0], channels, spatial, 1};
  }
  // A tensor of X's shape in `layout`, on DnnlDims.
  dnnl::memory::desc Desc(Layout layout) const {
    return layout == Layout::kPlain ? PlainDesc(DnnlDims()) : TensorDesc(x_dims, layout);
  }
};

// X `in[x]` is float32 with at least 2 dims (N, C, ...); each of `channel_inputs` is float32 [C].
// Throws braid::Error naming the blobs otherwise.
SpatialBnShapes ComputeSpatialBnShapes(const OperatorDef& def, const std::vector<ShapeInfo>& in,
                                       int x, const std::vector<int>& channel_inputs);

// oneDNN's forward descriptor (training mode: also the hint of the backward primitive) on the
// layout batch norm runs on: channel-blocked (nChw16c, else nChw8c) where oneDNN has a JIT kernel
// for it and C is a multiple of the block, else plain.
dnnl::batch_normalization_forward::primitive_desc MakeBnDesc(const SpatialBnShapes& s,
                                                             float epsilon, bool is_test);

class SpatialBNOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;

 private:
  struct Plan {
    DnnlPrimitive bn;
    LayoutBridge src, dst;
    dnnl::memory::desc channel;  // the [C] vectors
  };
  void Prepare();
  void Bind(const Plan& plan);
  void RunBn();  // reorders around the primitive
  void UpdateStatistics(const float* batch_var);

  std::vector<int64_t> prepared_dims_;
  SpatialBnShapes shapes_;
  int64_t chunk_ = 0;  // samples per primitive call (BatchChunk, ops/nn/dnnl_util.h)
  bool is_test_ = false;
  float epsilon_ = 1e-5f, momentum_ = 0.9f;
  std::shared_ptr<const Plan> plan_;
  ScratchLayout scratch_;
  BoundTensor src_, dst_;
  dnnl::memory scale_, shift_, mean_, variance_;
  std::vector<float> batch_variance_;  // training
  BoundPrimitive bn_;
};

}  // namespace braid

#endif  // BRAID_OPS_NN_SPATIAL_BN_OP_H_
