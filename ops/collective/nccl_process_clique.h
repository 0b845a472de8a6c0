// NcclProcessClique: NCCL communicators that span the processes of a job
// (runtime/dist/process_group.h).
//
// Every process contributes its local devices, in the same order, and every process must have the
// same number of them (checked: a mismatch is FailedPrecondition). The clique's world is
// local devices x group size; local device i of group rank g is NCCL rank g * local + i. Rank 0
// makes the unique id (ncclGetUniqueId) and ShareFromRankZero hands it to every process under
// NcclUniqueIdStoreKey(devices, key) (ops/collective/nccl_store_key.h: the job's store, the
// collective's key, nothing about the devices, so processes on different GPUs meet); each process
// then calls ncclCommInitRank for its devices (their physical GPUs) inside one
// ncclGroupStart/End, holding their DeviceLocks (communicator creation allocates device memory: a
// raw call), so the caller holds none. Made once per (ProcessGroup::id(), key) on first use and kept for the life of the
// process, as the devices are; asking for a key again with other devices is FailedPrecondition.
//
//   const std::vector<ncclComm_t>& comms =
//       NcclProcessClique(devices, *group, ProcessAllreduceNcclKey(tag));
//
// Making a clique is itself a collective over the processes: every process must ask for the same
// cliques in the same order (an op's first run), and collectives that may run at the same time
// need different keys (each clique orders its own operations). Throws braid::Error (naming the
// devices and key) on failure; a failed clique stays failed.
//
// Thread safety: callable from several threads; different keys are made concurrently.
#ifndef BRAID_OPS_COLLECTIVE_NCCL_PROCESS_CLIQUE_H_
#define BRAID_OPS_COLLECTIVE_NCCL_PROCESS_CLIQUE_H_

#include <nccl.h>

#include <string>
#include <vector>

#include "runtime/core/device.h"
#include "runtime/dist/process_group.h"

namespace braid {

const std::vector<ncclComm_t>& NcclProcessClique(const std::vector<Device>& devices,
                                                 ProcessGroup& group, const std::string& key);

}  // namespace braid

#endif  // BRAID_OPS_COLLECTIVE_NCCL_PROCESS_CLIQUE_H_
