// OptimizeInferenceNet: the graph rewrites an inference net's loader applies once, in their one
// valid order, before choosing layouts and packing parameters (runtime/models/blocked_layouts.h,
// runtime/models/pack_parameters.h):
//   1. FoldBatchNorm (runtime/models/fold_batch_norm.h): Conv -> SpatialBN becomes one Conv;
//   2. FuseConvSum (runtime/models/fuse_conv_sum.h): Conv -> Sum/Add becomes one Conv;
//   3. FuseConvActivation (runtime/models/fuse_conv_activation.h): Conv -> Relu/Clip becomes one
//      Conv, after a fused sum too (ResNet's Conv + BN + Add + ReLU as one op).
// Outputs change by rounding only. The Predictor (PredictorOptions::optimize_graph) and
// braid_bench_inference --optimize_graph run it.
//
//   const InferenceRewrites done = OptimizeInferenceNet(&predict_net, parameter_names, &ws);
//
// Thread safety: nothing may run on `workspace` or `net` meanwhile.
#ifndef BRAID_RUNTIME_MODELS_OPTIMIZE_INFERENCE_H_
#define BRAID_RUNTIME_MODELS_OPTIMIZE_INFERENCE_H_

#include <set>
#include <string>

#include "proto/braid.pb.h"

namespace braid {

class Workspace;

// How many ops each rewrite removed.
struct InferenceRewrites {
  int folded_batch_norms = 0;
  int fused_sums = 0;
  int fused_activations = 0;
};

// `parameters`: the blobs of `workspace` the init net wrote (FoldBatchNorm's `parameters`).
InferenceRewrites OptimizeInferenceNet(NetDef* net, const std::set<std::string>& parameters,
                                       Workspace* workspace);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_OPTIMIZE_INFERENCE_H_
