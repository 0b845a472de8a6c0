// NcclUniqueIdStoreKey: where a cross-process NCCL clique's unique id is shared
// (ops/collective/nccl_process_clique.h).
//
// Rank 0 of the process group writes the id under this key of the group's store, which is the
// job's own (runtime/dist/process_group.h prefixes every key with the job name), and every other
// rank reads it there. ShareId (nccl_process_clique.cu) asks with everything it has: the process's
// local devices and the collective's key (ProcessAllreduceNcclKey of ProcessAllreduce's `tag`). The store key names the
// collective alone, never the devices: the processes of a job use different GPUs (a process on
// cuda:0 and one on cuda:1 must meet at one key), and how many local devices each has is checked
// against rank 0's after the meeting, not by the key.
//
//   NcclUniqueIdStoreKey({cuda0}, "grads");   // "nccl/unique_id/grads", as for {cuda1}
//
// Thread safety: a pure function. CUDA-free, so tests without the CUDA backend check it.
#ifndef BRAID_OPS_COLLECTIVE_NCCL_STORE_KEY_H_
#define BRAID_OPS_COLLECTIVE_NCCL_STORE_KEY_H_

#include <string>
#include <vector>

#include "runtime/core/device.h"

namespace braid {

inline std::string NcclUniqueIdStoreKey([[maybe_unused]] const std::vector<Device>& local_devices,
                                        const std::string& key) {
  return "nccl/unique_id/" + key;
}

}  // namespace braid

#endif  // BRAID_OPS_COLLECTIVE_NCCL_STORE_KEY_H_
