// SpatialBNGradient: the gradient of training-mode SpatialBN (ops/nn/spatial_bn_op.h) on oneDNN,
// with Caffe2's inputs and outputs:
//
//   X, scale, dY, saved_mean, saved_inv_var  ->  dX, dscale, dbias
//
// saved_mean and saved_inv_var are the forward op's outputs 3 and 4; the batch variance oneDNN
// needs is recovered as 1 / saved_inv_var^2 - epsilon (epsilon: the forward op's argument, which
// the gradient maker copies). X seen as SpatialBN sees it (NCHW as it is), on the forward's
// layout (blocked where oneDNN has a JIT kernel for it): X and dY are reordered into buffers in
// the thread's scratch area (runtime/exec/scratch.h) and dX back, each unless that tensor is
// blocked already or asked blocked (runtime/core/tensor.h).
#ifndef BRAID_OPS_NN_SPATIAL_BN_GRADIENT_OP_H_
#define BRAID_OPS_NN_SPATIAL_BN_GRADIENT_OP_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "ops/nn/dnnl_util.h"
#include "ops/nn/spatial_bn_op.h"
#include "runtime/core/operator.h"

namespace braid {

// The shapes of SpatialBNGradient op `def`; throws braid::Error naming the blobs when dY is not
// X's shape or a [C] input has another size.
SpatialBnShapes ComputeSpatialBnGradientShapes(const OperatorDef& def,
                                               const std::vector<ShapeInfo>& in);

class SpatialBNGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;

 private:
  struct Plan {
    DnnlPrimitive backward;
    LayoutBridge src, diff_dst, diff_src;
    dnnl::memory::desc channel;
  };
  void Prepare();
  void Bind(const Plan& plan);

  std::vector<std::vector<int64_t>> prepared_dims_;
  SpatialBnShapes shapes_;
  float epsilon_ = 1e-5f;
  std::shared_ptr<const Plan> plan_;
  ScratchLayout scratch_;
  BoundTensor src_, diff_dst_, diff_src_;
  dnnl::memory scale_, mean_, diff_scale_, diff_shift_;
  dnnl::memory variance_;       // from saved_inv_var, in variance_buffer_
  std::vector<float> variance_buffer_;
  std::vector<float> zero_shift_;  // oneDNN's backward reads a shift no gradient depends on
  BoundPrimitive backward_;
};

}  // namespace braid

#endif  // BRAID_OPS_NN_SPATIAL_BN_GRADIENT_OP_H_
