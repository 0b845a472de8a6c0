#include "runtime/models/optimize_inference.h"

#include "runtime/models/fold_batch_norm.h"
#include "runtime/models/fuse_conv_activation.h"
#include "runtime/models/fuse_conv_sum.h"

namespace braid {

InferenceRewrites OptimizeInferenceNet(NetDef* net, const std::set<std::string>& parameters,
                                       Workspace* workspace) {
  InferenceRewrites done;
  done.folded_batch_norms = FoldBatchNorm(net, parameters, workspace);
  done.fused_sums = FuseConvSum(net);
  done.fused_activations = FuseConvActivation(net);
  return done;
}

}  // namespace braid
