// How braid's NCCL kernels report: the devices of a collective as text, and a failed NCCL call as
// braid::Error. Shared by Allreduce's and ProcessAllreduce's CUDA kernels and the cross-process
// cliques (ops/collective/allreduce_op.cu, process_allreduce_op.cu, nccl_process_clique.cu).
//
//   CheckNccl(ncclGroupEnd(), "ncclGroupEnd", devices);  // "NCCL ncclGroupEnd on cuda:0, cuda:1: ..."
//
// Thread safety: pure functions.
#ifndef BRAID_OPS_COLLECTIVE_NCCL_CHECK_H_
#define BRAID_OPS_COLLECTIVE_NCCL_CHECK_H_

#include <nccl.h>

#include <string>
#include <vector>

#include "braid/status.h"
#include "runtime/core/device.h"

namespace braid {

// "cuda:0, cuda:1".
inline std::string DevicesText(const std::vector<Device>& devices) {
  std::string text;
  for (const Device& d : devices) text += (text.empty() ? "" : ", ") + d.ToString();
  return text;
}

// Throws braid::Error (Internal) naming `call` and `devices` unless `result` is ncclSuccess or
// ncclInProgress.
inline void CheckNccl(ncclResult_t result, const char* call, const std::vector<Device>& devices) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  throw Error(Status::Internal(std::string("NCCL ") + call + " on " + DevicesText(devices) + ": " +
                               ncclGetErrorString(result)));
}

}  // namespace braid

#endif  // BRAID_OPS_COLLECTIVE_NCCL_CHECK_H_
