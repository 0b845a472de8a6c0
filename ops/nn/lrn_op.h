// LRN: local response normalisation across channels of NCHW float32 tensors (Caffe2's LRN, as in
// AlexNet, GoogLeNet and ZFNet).
//
//   X [N, C, H, W]  ->  Y [N, C, H, W] and, when a second output is named, scale [N, C, H, W]
//   scale[n,c,h,w] = bias + (alpha / size) * sum of X[n,c',h,w]^2 over c' in
//                    [c - (size-1)/2, c + (size-1)/2], channels outside [0, C) counting as 0
//   Y = X * scale^(-beta)
//
// Note alpha is divided by size (Caffe2's and oneDNN's lrn_across_channels convention; Caffe's
// and PyTorch's LocalResponseNorm divide the same way). Arguments, Caffe2's names and defaults:
// size (required, odd, >= 1), alpha 0, beta 0, bias 1, order NCHW (NHWC is refused).
//
//   type: "LRN" input: "X" output: "Y"
//   arg { name: "size" i: 5 } arg { name: "alpha" f: 1e-4 } arg { name: "beta" f: 0.75 }
//
// LRNGradient: inputs X, Y, dY and optionally scale (the forward's second output; recomputed from
// X when absent); output dX:
//   dX[c] = dY[c] * scale[c]^(-beta) - (2 alpha beta / size) * X[c] * R[c], where
//   R[c] = sum of dY[c'] Y[c'] / scale[c'] over the channels c' whose window holds c.
// Plain loops over whole channel planes (the op is memory-bound), samples spread over the OpenMP
// team (ops/common/parallel.h); temporaries live in the thread's scratch area
// (runtime/exec/scratch.h).
#ifndef BRAID_OPS_NN_LRN_OP_H_
#define BRAID_OPS_NN_LRN_OP_H_

#include "runtime/core/operator.h"

namespace braid {

class LRNOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

class LRNGradientOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_NN_LRN_OP_H_
