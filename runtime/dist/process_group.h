// ProcessGroup: the processes (ranks) of one job, connected through Gloo.
//
// Every rank calls Connect with the same world size, rendezvous URL and job name and its own rank.
// The ranks meet in a Gloo store (`file:///shared/dir` -> FileStore, `redis://HOST:PORT` ->
// RedisStore), each job's keys under a PrefixStore of its job name so that several jobs share one
// store, then connect a full mesh of TCP pairs. A store that cannot be reached, or a rank that does
// not arrive, is an error after `timeout` naming the URL and the missing ranks; a peer that dies
// during a collective is an error (at the latest after `timeout`) naming the rank whose connection
// was lost, never a hang or a crash. A collective that times out with every connection intact (a
// stuck peer) says that the rank is unknown: nothing tells which rank stopped.
//
//   ProcessGroupOptions options;
//   options.rank = rank; options.world_size = 4;
//   options.rendezvous = "file:///tmp/job42";
//   std::unique_ptr<ProcessGroup> group;
//   Status s = ProcessGroup::Connect(options, &group);
//   if (s.ok()) s = group->AllreduceSum(grad, n, /*tag=*/7, AllreduceAlgorithm::kRing);
//
// Tags: collectives that may run at the same time (a `dag` net's independent Allreduce ops) must
// use distinct tags, and every rank must use the same tag for the same collective: Gloo matches
// messages by tag, not by call order. Sequential collectives may reuse a tag.
//
// Connect makes the process ignore SIGPIPE: a peer's death must be a collective's error, not
// this rank's.
//
// Sharing a value: the group keeps its store, and ShareFromRankZero hands a value that rank 0 made
// (an NCCL unique id) to every rank through it:
//
//   std::string id = rank == 0 ? MakeId() : "";
//   s = group->ShareFromRankZero("nccl/unique_id/grads", &id);  // every rank now has rank 0's id
//
// Thread safety: after Connect, AllreduceSum and Barrier may be called from several threads at
// once with distinct tags, and ShareFromRankZero and GatherFromEveryRank with distinct keys. The
// group must outlive every call in flight.
#ifndef BRAID_RUNTIME_DIST_PROCESS_GROUP_H_
#define BRAID_RUNTIME_DIST_PROCESS_GROUP_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "braid/process_group.h"
#include "braid/status.h"
#include "runtime/dist/peer_addresses.h"
#include "runtime/dist/peer_loss_reports.h"
#include "runtime/dist/rendezvous_store.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace braid {

// ProcessGroupOptions and AllreduceAlgorithm: <braid/process_group.h>, whose functions act on the
// current group (CurrentProcessGroup below).

// "ring" or "halving_doubling"; InvalidArgument naming the value otherwise.
Status ParseAllreduceAlgorithm(const std::string& name, AllreduceAlgorithm* algorithm);

class ProcessGroup {
 public:
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // Rendezvous and connect; blocks until every rank arrived or `options.timeout` passed.
  static Status Connect(const ProcessGroupOptions& options, std::unique_ptr<ProcessGroup>* group);

  // Names this group within the process: distinct for every group ever made, even one made at
  // a destroyed group's address (so caches of per-group state, such as NCCL cliques, key by it).
  uint64_t id() const { return id_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  const ProcessGroupOptions& options() const { return options_; }

  // data[0, count) becomes the sum over all ranks' data, in place.
  Status AllreduceSum(float* data, size_t count, uint32_t tag, AllreduceAlgorithm algorithm);
  // Returns when every rank reached the barrier with this tag.
  Status Barrier(uint32_t tag);

  // Rank 0 stores *value under `key` (in this job's part of the store); every other rank waits for
  // it (at most the group's timeout: DeadlineExceeded naming the key and URL) and reads it into
  // *value. Every rank calls it with the same key. A key is written once per job: each use needs
  // a key of its own (name it after what it shares, e.g. the collective it sets up).
  Status ShareFromRankZero(const std::string& key, std::string* value);
  // Every rank stores `value` under `key` and reads every rank's: (*values)[r] is rank r's. Waits
  // at most the group's timeout for the others (DeadlineExceeded naming the ranks that did not
  // store theirs). Every rank calls it with the same key, once per job, as ShareFromRankZero.
  Status GatherFromEveryRank(const std::string& key, const std::string& value,
                             std::vector<std::string>* values);

 private:
  ProcessGroup(const ProcessGroupOptions& options, std::unique_ptr<RendezvousStore> store,
               std::shared_ptr<gloo::Context> context, PeerAddresses peers);
  // A Status for a Gloo exception thrown by collective `what`, naming the lost ranks.
  Status CollectiveError(const std::string& what, const std::exception& e);

  const uint64_t id_;
  const ProcessGroupOptions options_;
  const int rank_;
  const int size_;
  const std::unique_ptr<RendezvousStore> store_;  // thread-safe
  std::shared_ptr<gloo::Context> context_;
  const PeerAddresses peers_;  // names the rank of a failed connection
  PeerLossReports loss_reports_;  // which rank was lost first, through store_
};

// The process's current group, used by ProcessAllreduce (ops/collective/process_allreduce_op.h);
// null until set. The process owns it: SetProcessGroup replaces (and destroys) the previous group,
// so call it only when no collective is running; the pointer CurrentProcessGroup returns is valid
// until the next SetProcessGroup. Both are thread-safe.
ProcessGroup* CurrentProcessGroup();
void SetProcessGroup(std::unique_ptr<ProcessGroup> group);

}  // namespace braid

#endif  // BRAID_RUNTIME_DIST_PROCESS_GROUP_H_
