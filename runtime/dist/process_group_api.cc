// The functions of <braid/process_group.h>, over the process's current group
// (runtime/dist/process_group.h). connect_mu serialises ConnectProcessGroup and
// DisconnectProcessGroup (a second Connect waits for the first, then finds its group); the rank
// and size are kept apart in atomics, so asking for them never touches a group being destroyed.
#include <atomic>
#include <memory>
#include <mutex>

#include "braid/process_group.h"
#include "runtime/dist/process_group.h"

namespace braid {
namespace {

std::mutex connect_mu;
std::atomic<int> connected_rank{0};
std::atomic<int> connected_size{1};

Status NoGroup(const char* call) {
  return Status::FailedPrecondition(std::string(call) +
                                    ": no process group is connected (ConnectProcessGroup)");
}

}  // namespace

Status ConnectProcessGroup(const ProcessGroupOptions& options) {
  std::lock_guard<std::mutex> lock(connect_mu);
  if (const ProcessGroup* current = CurrentProcessGroup()) {
    return Status::FailedPrecondition(
        "ConnectProcessGroup: rank " + std::to_string(current->rank()) + " of job '" +
        current->options().job_name + "' is connected; DisconnectProcessGroup first");
  }
  std::unique_ptr<ProcessGroup> group;
  const Status connected = ProcessGroup::Connect(options, &group);
  if (!connected.ok()) return connected;
  connected_rank = group->rank();
  connected_size = group->size();
  SetProcessGroup(std::move(group));
  return Status::OK();
}

Status DisconnectProcessGroup() {
  std::lock_guard<std::mutex> lock(connect_mu);
  if (CurrentProcessGroup() == nullptr) return NoGroup("DisconnectProcessGroup");
  connected_rank = 0;
  connected_size = 1;
  SetProcessGroup(nullptr);
  return Status::OK();
}

int ProcessRank() { return connected_rank; }
int ProcessWorldSize() { return connected_size; }

Status ProcessAllreduceSum(float* data, size_t count, uint32_t tag, AllreduceAlgorithm algorithm) {
  ProcessGroup* group = CurrentProcessGroup();
  if (group == nullptr) return NoGroup("ProcessAllreduceSum");
  return group->AllreduceSum(data, count, tag, algorithm);
}

Status ProcessBarrier(uint32_t tag) {
  ProcessGroup* group = CurrentProcessGroup();
  if (group == nullptr) return NoGroup("ProcessBarrier");
  return group->Barrier(tag);
}

Status ProcessShareFromRankZero(const std::string& key, std::string* value) {
  ProcessGroup* group = CurrentProcessGroup();
  if (group == nullptr) return NoGroup("ProcessShareFromRankZero");
  return group->ShareFromRankZero(key, value);
}

}  // namespace braid
