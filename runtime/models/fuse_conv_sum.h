// FuseConvSum: in an inference net, gives each residual addition (a Sum of two blobs, or an Add
// without broadcast, of equal shapes) to the Conv that writes one of its operands, whose primitive
// adds the other operand S as it writes its output (Conv's fused_sum,
// runtime/core/fused_activation.h; oneDNN's binary post-op, ops/nn/conv_op.h): one op and two
// passes over the activation less per residual block, the same values (conv(X) + b + S, one
// rounding of the same sum).
//
// A Conv (op i) writing C and a Sum or Add (op j > i) of C and S writing Y are fused when
//   - the Conv is op j's absorbing producer of C (runtime/models/blob_uses.h: no other op reads
//     or writes C, but after an op j in place on C; nothing between them touches Y; op j has no
//     control input, ...) and runs on a CPU or sim device with no fused_sum or fused_activation
//     argument yet, on the device op j runs on;
//   - S is neither C nor Y, and Add has no broadcast (Caffe2's Add then takes equal shapes);
//   - no op between them writes one of the Conv's inputs: the Conv moves to op j's place, after
//     S is written, so it must read there what it read at i.
// Where both operands come from such Convs, the later one takes the Sum. The Conv then takes S
// as its last input and writes Y in op j's place; op j and the Conv's old place are removed.
//
// Apply it after FoldBatchNorm (runtime/models/fold_batch_norm.h), which turns Conv -> SpatialBN
// -> Add into Conv -> Add, and before FuseConvActivation, which then gives the ReLU after the
// addition to the same Conv (ResNet's Conv + Add + ReLU as one op); runtime/models/
// optimize_inference.h runs the three. A Conv with a fused sum has no gradient: fuse inference
// nets only.
//
//   const int fused = FuseConvSum(&predict_net);
//
// Returns the number of Sum and Add ops removed. Thread safety: a pure function of the NetDef.
#ifndef BRAID_RUNTIME_MODELS_FUSE_CONV_SUM_H_
#define BRAID_RUNTIME_MODELS_FUSE_CONV_SUM_H_

#include "proto/braid.pb.h"

namespace braid {

int FuseConvSum(NetDef* net);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_FUSE_CONV_SUM_H_
