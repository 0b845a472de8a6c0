#include <cuda_runtime.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "braid/status.h"
#include "ops/collective/nccl_check.h"
#include "ops/collective/nccl_process_clique.h"
#include "ops/collective/nccl_store_key.h"
#include "runtime/core/device_context.h"
#include "runtime/device/device_lock.h"

namespace braid {
namespace {

struct Clique {
  std::vector<int> gpus;  // the local devices' physical GPUs, in rank order
  std::once_flag made;
  Status status;
  std::vector<ncclComm_t> comms;
};

// What rank 0 shares: its unique id and its local device count.
struct SharedId {
  ncclUniqueId id;
  int local_devices;
};

std::string Describe(const std::vector<Device>& devices, const std::string& key) {
  return "NCCL clique of " + DevicesText(devices) + " across processes (key '" + key + "')";
}

Status NcclStatus(ncclResult_t result, const char* call, const std::string& what) {
  if (result == ncclSuccess || result == ncclInProgress) return Status::OK();
  return Status::Internal(what + ": " + call + ": " + ncclGetErrorString(result));
}

Status ShareId(const std::vector<Device>& devices, ProcessGroup& group, const std::string& key,
               const std::string& what, ncclUniqueId* id) {
  const int local_devices = static_cast<int>(devices.size());
  SharedId shared{};
  std::string bytes;
  if (group.rank() == 0) {
    Status s = NcclStatus(ncclGetUniqueId(&shared.id), "ncclGetUniqueId", what);
    if (!s.ok()) return s;
    shared.local_devices = local_devices;
    bytes.assign(reinterpret_cast<const char*>(&shared), sizeof(shared));
  }
  Status s = group.ShareFromRankZero(NcclUniqueIdStoreKey(devices, key), &bytes);
  if (!s.ok()) return Status(s.code(), what + ": " + s.message());
  if (bytes.size() != sizeof(shared)) return Status::Internal(what + ": a malformed unique id");
  std::memcpy(&shared, bytes.data(), sizeof(shared));
  if (shared.local_devices != local_devices) {
    return Status::FailedPrecondition(
        what + ": rank 0 has " + std::to_string(shared.local_devices) + " local devices, rank " +
        std::to_string(group.rank()) + " has " + std::to_string(local_devices) +
        " (every process needs as many)");
  }
  *id = shared.id;
  return Status::OK();
}

Status Make(const std::vector<Device>& devices, const std::vector<int>& gpus, ProcessGroup& group,
            const std::string& key, std::vector<ncclComm_t>* comms) {
  const std::string what = Describe(devices, key);
  const int local = static_cast<int>(gpus.size());
  ncclUniqueId id;
  Status s = ShareId(devices, group, key, what, &id);  // waits for rank 0: no device lock held
  if (!s.ok()) return s;
  comms->assign(local, nullptr);
  DevicesLock raw(devices);  // ncclCommInitRank allocates device memory: a raw call
  int previous_device = 0;
  cudaGetDevice(&previous_device);
  s = NcclStatus(ncclGroupStart(), "ncclGroupStart", what);
  if (!s.ok()) return s;
  for (int i = 0; i < local && s.ok(); ++i) {
    cudaSetDevice(gpus[i]);
    s = NcclStatus(
        ncclCommInitRank(&(*comms)[i], local * group.size(), id, group.rank() * local + i),
        "ncclCommInitRank", what);
  }
  const Status ended = NcclStatus(ncclGroupEnd(), "ncclGroupEnd", what);  // closes what it opened
  cudaSetDevice(previous_device);
  return s.ok() ? ended : s;
}

}  // namespace

const std::vector<ncclComm_t>& NcclProcessClique(const std::vector<Device>& devices,
                                                 ProcessGroup& group, const std::string& key) {
  // By the group's id, never its address: a group made where a destroyed one was is another.
  using Key = std::pair<uint64_t, std::string>;
  static auto* const mu = new std::mutex();
  static auto* const cliques = new std::map<Key, std::unique_ptr<Clique>>();
  std::vector<int> gpus;
  for (const Device& d : devices) gpus.push_back(PhysicalDevice(d).id);
  Clique* clique;
  {
    std::lock_guard<std::mutex> lock(*mu);
    auto& slot = (*cliques)[Key(group.id(), key)];
    if (slot == nullptr) {
      slot = std::make_unique<Clique>();
      slot->gpus = gpus;
    }
    clique = slot.get();
  }
  if (clique->gpus != gpus) {
    throw Error(Status::FailedPrecondition(
        Describe(devices, key) + ": the key already names a clique of other devices in this "
        "process group; give each device set a key of its own"));
  }
  // Outside mu: making a clique waits for the other processes, and other keys must not wait.
  std::call_once(clique->made,
                 [&] { clique->status = Make(devices, gpus, group, key, &clique->comms); });
  if (!clique->status.ok()) throw Error(clique->status);
  return clique->comms;
}

}  // namespace braid
