// ConvGradient: the gradients of Conv (ops/nn/conv_op.h) on oneDNN, Caffe2's inputs and outputs.
//
//   X, filter, dY  ->  dfilter, dbias, dX      (Conv had a bias)
//   X, filter, dY  ->  dfilter, dX             (no_bias=1: Conv had no bias)
// dX is left out when the op names one output fewer (dfilter, dbias / dfilter alone). The window
// arguments are Conv's (the gradient maker copies them). Layouts and caching as for Conv: oneDNN
// picks blocked layouts and the op reorders X, filter and dY in and dfilter, dX out.
#ifndef BRAID_OPS_NN_CONV_GRADIENT_OP_H_
#define BRAID_OPS_NN_CONV_GRADIENT_OP_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "ops/nn/conv_op.h"
#include "ops/nn/dnnl_util.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/operator.h"

namespace braid {

// Which outputs a ConvGradient op writes (-1: not written), from its no_bias argument and arity.
struct ConvGradientOutputs {
  int dfilter = 0, dbias = -1, dx = -1;
};
ConvGradientOutputs ConvGradientOutputsOf(const OperatorDef& def);

// The shapes of ConvGradient op `def` (inputs X, filter, dY); throws braid::Error naming the
// blobs when dY is not the shape Conv would produce.
ConvShapes ComputeConvGradientShapes(const OperatorDef& def, const std::vector<ShapeInfo>& in);

// The backward primitives and the reorders around them (immutable, cacheable).
struct ConvBackwardPlan {
  LayoutBridge src, diff_dst_for_weights, diff_weights;
  dnnl::memory::desc diff_bias;
  DnnlPrimitive backward_weights;
  // Only when dX is computed.
  LayoutBridge weights, diff_dst_for_data, diff_src;
  DnnlPrimitive backward_data;
};

class ConvGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;

 private:
  void Prepare();
  void Bind(const ConvBackwardPlan& plan);

  std::vector<std::vector<int64_t>> prepared_dims_;
  ConvShapes shapes_;
  ConvGradientOutputs outputs_;
  std::shared_ptr<const ConvBackwardPlan> plan_;
  ScratchLayout scratch_;
  BoundTensor src_, diff_dst_, diff_weights_;
  dnnl::memory diff_bias_;
  BoundPrimitive backward_weights_;
  // dY in backward_data's layout, when it differs from backward_weights'.
  BoundTensor weights_, diff_dst_for_data_, diff_src_;
  bool diff_dst_layouts_agree_ = true;
  BoundPrimitive backward_data_;
};

}  // namespace braid

#endif  // BRAID_OPS_NN_CONV_GRADIENT_OP_H_
