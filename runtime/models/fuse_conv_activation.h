// FuseConvActivation: in an inference net, gives each Relu or Clip (MobileNet's ReLU6) that
// directly follows a Conv to the Conv, whose primitive applies it as it writes its output (oneDNN's
// eltwise post-op, ops/nn/conv_op.h): one op and one pass over the activation less per layer, the
// same values (max(y, 0) or min(max(y, lo), hi) of the same y).
//
// A Conv (op i) and an activation op (op j > i) are fused when
//   - the activation reads the Conv's output X and writes Y;
//   - no op but the activation reads X (one in place, X -> X, may be read after it: that is its
//     output), no op between them writes X, and X is not an external output unless the activation
//     writes it in place; nothing between them reads or writes Y, nor does the Conv read it; a
//     control input counts as a read;
//   - the Conv runs on a CPU or sim device (its device_option, else the net's): CUDA's Conv does
//     not take the arguments; and it has no fused activation yet (a fused sum is applied first:
//     Y = act(conv(X) + b + S)).
// The Conv then writes Y with its fused_activation argument set (runtime/core/fused_activation.h),
// and the activation op is removed. Apply it after FoldBatchNorm
// (runtime/models/fold_batch_norm.h), which turns Conv -> SpatialBN -> Relu into Conv -> Relu, and
// FuseConvSum (runtime/models/fuse_conv_sum.h), and before UseBlockedLayouts:
// runtime/models/optimize_inference.h runs them in order. A Conv with a fused activation has no
// gradient: fuse inference nets only.
//
//   const int fused = FuseConvActivation(&predict_net);
//
// Returns the number of activation ops removed. Thread safety: pure functions of the NetDef.
#ifndef BRAID_RUNTIME_MODELS_FUSE_CONV_ACTIVATION_H_
#define BRAID_RUNTIME_MODELS_FUSE_CONV_ACTIVATION_H_

#include "proto/braid.pb.h"

namespace braid {

int FuseConvActivation(NetDef* net);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_FUSE_CONV_ACTIVATION_H_
