// FoldBatchNorm: removes an inference net's batch norms that follow a convolution by folding them
// into the convolution's filter and bias, once, when the net is loaded. A SpatialBN with
// is_test = 1 computes y = (x - mean) * scale / sqrt(var + epsilon) + bias, per channel; after a
// Conv writing x = W * in + b that is the Conv with
//   W'[m] = W[m] * a[m],  b'[m] = (b[m] - mean[m]) * a[m] + bias[m],
//   a[m] = scale[m] / sqrt(var[m] + epsilon)
// (a[m] computed in double). One op and one pass over the activation less per layer; outputs
// change by rounding only (the product is rounded once more).
//
// A Conv (op i) and a SpatialBN (op j > i) are folded when
//   - the SpatialBN has is_test = 1, reads the Conv's output X as its input 0, and its order is
//     NCHW, as the Conv's is; the Conv has no fused sum or activation
//     (runtime/models/fuse_conv_activation.h);
//   - no op but the SpatialBN reads X (an in-place SpatialBN, X -> X, may be read after it: that is
//     its output; a control input counts as a read), no op between them writes X, and X is not an
//     external output unless the SpatialBN writes it in place; the SpatialBN's output Y is neither
//     an input of the Conv nor read or written by an op between them;
//   - the filter, the Conv's bias (if any) and the SpatialBN's scale, bias, mean and var are
//     float32 tensors of `parameters` in `workspace` in host memory (a cpu device: on sim and
//     CUDA devices nothing is folded), with the shapes the ops take; the filter and the Conv's
//     bias are read by this Conv only, and the SpatialBN's bias by this SpatialBN only, and none
//     of them is written by the net or is an external output (they are rewritten in place: no
//     second copy of any parameter).
// The Conv then writes the SpatialBN's output, takes the folded bias (its own, or the SpatialBN's
// bias blob, rewritten, where it had none), and the SpatialBN is removed. The folded scale, mean
// and var blobs stay in `workspace` unread.
//
//   Workspace parameters;
//   Status s = RunInitNet(init_net, &parameters);
//   const std::vector<std::string> names = parameters.LocalBlobNames();
//   const int folded = FoldBatchNorm(&predict_net, {names.begin(), names.end()}, &parameters);
//
// Run it before UseBlockedLayouts and PackParameters (runtime/models/blocked_layouts.h,
// runtime/models/pack_parameters.h). Returns the number of SpatialBN ops removed.
// Thread safety: nothing may run on `workspace` or `net` meanwhile.
#ifndef BRAID_RUNTIME_MODELS_FOLD_BATCH_NORM_H_
#define BRAID_RUNTIME_MODELS_FOLD_BATCH_NORM_H_

#include <set>
#include <string>

#include "proto/braid.pb.h"
#include "runtime/core/workspace.h"

namespace braid {

int FoldBatchNorm(NetDef* net, const std::set<std::string>& parameters, Workspace* workspace);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_FOLD_BATCH_NORM_H_
