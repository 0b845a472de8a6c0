// ConvTransposeGradient: the gradient of ConvTranspose (ops/nn/conv_transpose_op.h), Caffe2's.
//
//   inputs X [N, C, H, W], filter [C, M/group, kH, kW], dY [N, M, outH, outW]
//   outputs dfilter, dbias [M] (unless no_bias=1), dX (when named)
//
// With ConvTranspose's arguments plus no_bias (set by the gradient maker when the forward op had
// no bias). Per sample and group, cols = Im2Col(dY_g) (ops/nn/im2col.h), then
// dfilter_g += X_g cols^T and dX_g = W_g cols (cblas_sgemm); dbias sums dY over N, H and W.
//
//   type: "ConvTransposeGradient" input: "X" input: "W" input: "dY"
//   output: "dW" output: "db" output: "dX" arg { name: "stride" i: 2 }
#ifndef BRAID_OPS_NN_CONV_TRANSPOSE_GRADIENT_OP_H_
#define BRAID_OPS_NN_CONV_TRANSPOSE_GRADIENT_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class ConvTransposeGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_NN_CONV_TRANSPOSE_GRADIENT_OP_H_
