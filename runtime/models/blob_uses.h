// BlobUses: which ops of a net read and write each blob, for the graph rewrites that must prove a
// blob has no other user before they change its producer (runtime/models/fold_batch_norm.h,
// runtime/models/fuse_conv_sum.h, runtime/models/fuse_conv_activation.h).
//
//   const std::map<std::string, BlobUses> uses = UsesOf(net);
//   if (OnlyOp(uses.at("x").readers, j)) ...  // op j is x's only reader
//
// Thread safety: pure functions of the NetDef.
#ifndef BRAID_RUNTIME_MODELS_BLOB_USES_H_
#define BRAID_RUNTIME_MODELS_BLOB_USES_H_

#include <map>
#include <string>
#include <vector>

#include "proto/braid.pb.h"

namespace braid {

// Op indices in net order; an op appears once per input, control input or output naming the blob.
struct BlobUses {
  std::vector<int> readers, writers;
};

// Every blob an op reads or writes; a control input counts as a read (the op names the blob, so a
// rewrite may not remove its writer).
std::map<std::string, BlobUses> UsesOf(const NetDef& net);
// Whether `ops` is not empty and holds op `op` only.
bool OnlyOp(const std::vector<int>& ops, int op);
bool IsExternalOutput(const NetDef& net, const std::string& blob);
// The op that may absorb op `consumer` (X -> Y, X its input `input` and Y its only output): the
// last writer of X before it, when that op, writing Y in X's place, makes the consumer removable
// with no other op seeing a change:
//   - nothing else writes X, and nothing else reads it (a control input counts as a read), except
//     that after a consumer in place (X -> X) ops may read and write X: that is its output (a
//     Sum in place followed by a Relu in place, as Caffe2's ResNet builders write them);
//   - X is not an external output unless the consumer writes it in place;
//   - no op between the two reads or writes Y, and the producer does not read Y;
//   - the producer has one output, and the consumer no control input (removing it would drop
//     the ordering it asks for).
// -1 when there is none. The caller checks the ops' types, arguments and other inputs.
int AbsorbingProducer(const NetDef& net, const std::map<std::string, BlobUses>& uses, int consumer,
                      int input = 0);
// Whether any op strictly between `after` and `before` writes `blob` (or, with `reads`, reads it;
// a control input counts as a read).
bool TouchedBetween(const std::map<std::string, BlobUses>& uses, const std::string& blob, int after,
                    int before, bool reads = true);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_BLOB_USES_H_
