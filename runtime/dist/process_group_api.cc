// The functions of <braid/process_group.h>, over the process's current group
// (runtime/dist/process_group.h). connect_mu serialises ConnectProcessGroup and
// DisconnectProcessGroup (a second Connect waits for the first, then finds its group); the rank
// and size are kept apart, in one atomic word, so asking for them never touches a group being
// destroyed nor sees one group's rank with another's size.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "braid/process_group.h"
#include "runtime/dist/process_group.h"

namespace braid {
namespace {

std::mutex connect_mu;
std::atomic<uint64_t> rank_and_size{uint64_t{1}
                                    << 32};  // size in the high 32 bits, rank in the low

uint64_t RankAndSize(int rank, int size) {
  return static_cast<uint64_t>(static_cast<uint32_t>(size)) << 32 | static_cast<uint32_t>(rank);
}

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
  rank_and_size = RankAndSize(group->rank(), group->size());
  SetProcessGroup(std::move(group));
  return Status::OK();
}

Status DisconnectProcessGroup() {
  std::lock_guard<std::mutex> lock(connect_mu);
  if (CurrentProcessGroup() == nullptr) return NoGroup("DisconnectProcessGroup");
  rank_and_size = RankAndSize(0, 1);
  SetProcessGroup(nullptr);
  return Status::OK();
}

int ProcessRank() { return static_cast<int>(rank_and_size.load() & 0xffffffffu); }
int ProcessWorldSize() { return static_cast<int>(rank_and_size.load() >> 32); }

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
