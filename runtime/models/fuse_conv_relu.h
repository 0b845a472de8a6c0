// FuseConvRelu: in an inference net, gives each Relu that directly follows a Conv to the Conv,
// whose primitive applies it as it writes its output (oneDNN's eltwise post-op, ops/nn/conv_op.h):
// one op and one pass over the activation less per layer, the same values (max(y, 0) of the same y).
//
// A Conv (op i) and a Relu (op j > i) are fused when
//   - the Relu reads the Conv's output X and writes Y;
//   - no op but the Relu reads X (a Relu in place, X -> X, may be read after it: that is its
//     output), no op between them writes X, and X is not an external output unless the Relu writes
//     it in place; nothing between them reads or writes Y;
//   - the Conv runs on a CPU or sim device (its device_option, else the net's): CUDA's Conv does
//     not take the argument.
// The Conv then writes Y with kFusedReluArg set, and the Relu is removed. Apply it after
// FoldBatchNorm (runtime/models/fold_batch_norm.h), which turns Conv -> SpatialBN -> Relu into
// Conv -> Relu, and before UseBlockedLayouts. A Conv with the argument has no gradient: fuse
// inference nets only.
//
//   const int fused = FuseConvRelu(&predict_net);
//
// Returns the number of Relu ops removed. Thread safety: a pure function of the NetDef.
#ifndef BRAID_RUNTIME_MODELS_FUSE_CONV_RELU_H_
#define BRAID_RUNTIME_MODELS_FUSE_CONV_RELU_H_

#include "proto/braid.pb.h"

namespace braid {

// Conv's argument (int, 0 or 1): Y = max(conv(X) + bias, 0).
inline constexpr char kFusedReluArg[] = "fused_relu";

int FuseConvRelu(NetDef* net);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_FUSE_CONV_RELU_H_
