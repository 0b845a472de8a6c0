// The functions of <braid/process_group.h>, over the process's current group
// (runtime/dist/process_group.h).
#include <memory>

#include "braid/process_group.h"
#include "runtime/dist/process_group.h"

namespace braid {
namespace {

Status NoGroup(const char* call) {
  return Status::FailedPrecondition(std::string(call) +
                                    ": no process group is connected (ConnectProcessGroup)");
}

}  // namespace

Status ConnectProcessGroup(const ProcessGroupOptions& options) {
  if (ProcessGroup* current = CurrentProcessGroup()) {
    return Status::FailedPrecondition(
        "ConnectProcessGroup: rank " + std::to_string(current->rank()) + " of job '" +
        current->options().job_name + "' is connected; DisconnectProcessGroup first");
  }
  std::unique_ptr<ProcessGroup> group;
  const Status connected = ProcessGroup::Connect(options, &group);
  if (connected.ok()) SetProcessGroup(std::move(group));
  return connected;
}

Status DisconnectProcessGroup() {
  if (CurrentProcessGroup() == nullptr) return NoGroup("DisconnectProcessGroup");
  SetProcessGroup(nullptr);
  return Status::OK();
}

int ProcessRank() {
  const ProcessGroup* group = CurrentProcessGroup();
  return group == nullptr ? 0 : group->rank();
}

int ProcessWorldSize() {
  const ProcessGroup* group = CurrentProcessGroup();
  return group == nullptr ? 1 : group->size();
}

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
