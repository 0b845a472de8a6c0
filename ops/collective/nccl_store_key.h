// NcclUniqueIdStoreKey: where a cross-process NCCL clique's unique id is shared
// (ops/collective/nccl_process_clique.h).
//
// Rank 0 of the process group writes the id under this key of the group's store, which is the
// job's own (runtime/process_group.h prefixes every key with the job name), and every other rank
// reads it there. The key names the collective (Allreduce's `key` argument) and nothing about the
// process's devices, so processes that use different GPUs meet at the same key.
//
//   NcclUniqueIdStoreKey("data_parallel_gradients");   // "nccl/unique_id/data_parallel_gradients"
//
// Thread safety: a pure function. CUDA-free, so tests without the CUDA backend check it.
#ifndef BRAID_OPS_COLLECTIVE_NCCL_STORE_KEY_H_
#define BRAID_OPS_COLLECTIVE_NCCL_STORE_KEY_H_

#include <string>

namespace braid {

inline std::string NcclUniqueIdStoreKey(const std::string& key) { return "nccl/unique_id/" + key; }

}  // namespace braid

#endif  // BRAID_OPS_COLLECTIVE_NCCL_STORE_KEY_H_
