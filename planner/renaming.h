// RenameSharedBlobs: memory sharing expressed as blob names (the form Caffe2's memonger returns).
//
// Recyclable blobs (planner/memory_plan.h) are grouped into chains in which each blob precedes the
// next or dies into it in place; every chain of two or more blobs is renamed to one shared name
// "__m<i>_shared" (a name the net does not use), so a runtime without arenas reuses one tensor for
// the whole chain. Precedence is always the dag executor's, whatever request.executor says, so the
// renamed net's dataflow DAG has exactly the original's orderings (planner/verify_plan.h's
// VerifyRenamedNet proves it). Chains are built greedily in order of first write, each blob joining
// the chain whose size fits it best. An op whose first output is renamed gets a `seed` argument
// pinning its random stream (planner/op_seed.h), since the default seed hashes that name.
//
//   NetDef shared = RenameSharedBlobs(net, request);
//
// Pure function; thread-safe.
#ifndef BRAID_PLANNER_RENAMING_H_
#define BRAID_PLANNER_RENAMING_H_

#include "planner/memory_plan.h"
#include "proto/braid.pb.h"

namespace braid {

NetDef RenameSharedBlobs(const NetDef& net, const PlanRequest& request);

}  // namespace braid

#endif  // BRAID_PLANNER_RENAMING_H_
