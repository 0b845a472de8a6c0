// BlobUses: which ops of a net read and write each blob, for the graph rewrites that must prove a
// blob has no other user before they change its producer (runtime/models/fold_batch_norm.h,
// runtime/models/fuse_conv_activation.h).
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
// Whether any op strictly between `after` and `before` reads or writes `blob`.
bool TouchedBetween(const std::map<std::string, BlobUses>& uses, const std::string& blob, int after,
                    int before);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_BLOB_USES_H_
