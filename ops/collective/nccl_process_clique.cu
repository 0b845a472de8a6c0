#include <cuda_runtime.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "ops/collective/nccl_process_clique.h"
#include "runtime/status.h"

namespace braid {
namespace {

struct Clique {
  std::once_flag made;
  Status status;
  std::vector<ncclComm_t> comms;
};

// What rank 0 shares: its unique id and its local device count.
struct SharedId {
  ncclUniqueId id;
  int local_devices;
};

std::string Describe(const std::vector<int>& ids, const std::string& key) {
  std::string text = "NCCL clique of cuda devices ";
  for (size_t i = 0; i < ids.size(); ++i) text += (i ? "," : "") + std::to_string(ids[i]);
  return text + " across processes (key '" + key + "')";
}

Status NcclStatus(ncclResult_t result, const char* call, const std::string& what) {
  if (result == ncclSuccess || result == ncclInProgress) return Status::OK();
  return Status::Internal(what + ": " + call + ": " + ncclGetErrorString(result));
}

Status ShareId(const std::vector<int>& ids, ProcessGroup& group, const std::string& key,
               const std::string& what, ncclUniqueId* id) {
  SharedId shared{};
  std::string bytes;
  if (group.rank() == 0) {
    Status s = NcclStatus(ncclGetUniqueId(&shared.id), "ncclGetUniqueId", what);
    if (!s.ok()) return s;
    shared.local_devices = static_cast<int>(ids.size());
    bytes.assign(reinterpret_cast<const char*>(&shared), sizeof(shared));
  }
  std::string share_key = "nccl/devices ";
  for (int d : ids) share_key += std::to_string(d) + ",";
  Status s = group.ShareFromRankZero(share_key + "/" + key, &bytes);
  if (!s.ok()) return Status(s.code(), what + ": " + s.message());
  if (bytes.size() != sizeof(shared)) return Status::Internal(what + ": a malformed unique id");
  std::memcpy(&shared, bytes.data(), sizeof(shared));
  if (shared.local_devices != static_cast<int>(ids.size())) {
    return Status::FailedPrecondition(
        what + ": rank 0 has " + std::to_string(shared.local_devices) + " local devices, rank " +
        std::to_string(group.rank()) + " has " + std::to_string(ids.size()) +
        " (every process needs as many)");
  }
  *id = shared.id;
  return Status::OK();
}

Status Make(const std::vector<int>& ids, ProcessGroup& group, const std::string& key,
            std::vector<ncclComm_t>* comms) {
  const std::string what = Describe(ids, key);
  ncclUniqueId id;
  Status s = ShareId(ids, group, key, what, &id);
  if (!s.ok()) return s;
  const int local = static_cast<int>(ids.size());
  comms->assign(local, nullptr);
  int previous_device = 0;
  cudaGetDevice(&previous_device);
  s = NcclStatus(ncclGroupStart(), "ncclGroupStart", what);
  if (!s.ok()) return s;
  for (int i = 0; i < local && s.ok(); ++i) {
    cudaSetDevice(ids[i]);
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
  using Key = std::tuple<const ProcessGroup*, std::vector<int>, std::string>;
  static auto* const mu = new std::mutex();
  static auto* const cliques = new std::map<Key, std::unique_ptr<Clique>>();
  std::vector<int> ids;
  for (const Device& d : devices) ids.push_back(d.id);
  Clique* clique;
  {
    std::lock_guard<std::mutex> lock(*mu);
    auto& slot = (*cliques)[Key(&group, ids, key)];
    if (slot == nullptr) slot = std::make_unique<Clique>();
    clique = slot.get();
  }
  // Outside mu: making a clique waits for the other processes, and other keys must not wait.
  std::call_once(clique->made, [&] { clique->status = Make(ids, group, key, &clique->comms); });
  if (!clique->status.ok()) throw Error(clique->status);
  return clique->comms;
}

}  // namespace braid
