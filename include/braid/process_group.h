// braid's public API for jobs of several processes (installed as <braid/process_group.h>).
//
// The processes (ranks) of a job, on one host or many, connect once, through Gloo, before any of
// them builds what reduces across them: a Trainer with TrainerOptions::processes (world_size > 1;
// <braid/trainer.h>), or nets with ProcessAllreduce ops. The connected group is the process's
// current one: braid's collectives use it, and the application may call the ones below itself
// (an average of its own metrics, a value rank 0 decides).
//
//   braid::ProcessGroupOptions options;
//   options.rank = 0;
//   options.world_size = 1;  // every rank runs the same code with its own rank
//   options.rendezvous = "file:///tmp/braid_process_group_example";
//   braid::Status s = braid::ConnectProcessGroup(options);
//   float loss = 0.25f;
//   if (s.ok()) s = braid::ProcessAllreduceSum(&loss, 1, /*tag=*/1);  // the sum over the ranks
//   std::string plan = "resnet20";  // what rank 0 says every rank uses
//   if (s.ok()) s = braid::ProcessShareFromRankZero("plan", &plan);
//   if (s.ok()) s = braid::DisconnectProcessGroup();
//   if (!s.ok()) std::cerr << s.ToString() << "\n";
//
// Rendezvous: every rank calls ConnectProcessGroup with the same world size, rendezvous URL and
// job name and its own rank, and waits (at most `timeout`) for the others. The ranks meet in a
// store: "file:///dir" (a directory every rank sees; one per job run, since a store keeps the
// keys of a run) or "redis://HOST:PORT" (several jobs may share it under distinct job names).
// Then each pair of ranks connects over TCP, on the address `hostname` names (or `interface`'s,
// else the loopback for ranks on one host).
//
// Collectives: every rank calls the same collectives in the same order; collectives that may run
// at the same time (from several threads) need distinct tags, and a tag names the same
// collective on every rank. braid's own collectives (a Trainer's, a net's ProcessAllreduce) pick
// their tags themselves, so call the application's while none of those runs in this process:
// before, between or after the Trainer's calls and the nets' runs.
//
// Errors: a store that cannot be reached, a rank that does not arrive, a peer that dies or stalls
// during a collective is a Status (DeadlineExceeded, IoError) naming the URL and the ranks,
// after `timeout` at the latest: never a hang or a crash. ConnectProcessGroup returns
// FailedPrecondition while a group is connected; the others return FailedPrecondition when none
// is. Connecting makes the process ignore SIGPIPE (a peer's death must fail a collective, not
// kill this rank).
//
// Threads: Connect and Disconnect are serialised (a second Connect waits for the first, then
// returns FailedPrecondition); ProcessRank and ProcessWorldSize may be called at any time.
// Collectives with distinct tags (or keys) may run at once, from any threads. Disconnect destroys
// the group: it must not race a collective (the application's, or a net's or Trainer's), and a
// Trainer built for the group must not run after it (the Trainer checks the group's rank and size
// when it is created, not at every step).
#ifndef BRAID_PROCESS_GROUP_H_
#define BRAID_PROCESS_GROUP_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "braid/status.h"

namespace braid {

struct ProcessGroupOptions {
  int rank = 0;
  int world_size = 1;
  // "file:///path/to/dir" (created if missing) or "redis://HOST:PORT".
  std::string rendezvous;
  // Prefix of this job's keys in the store.
  std::string job_name = "braid";
  // The address or host name to bind (Gloo's tcp attr hostname); empty: `interface`, else loopback.
  std::string hostname;
  // A network interface to bind (e.g. "eth0"); used when `hostname` is empty.
  std::string interface;
  // Bounds the rendezvous and every collective.
  std::chrono::milliseconds timeout = std::chrono::seconds(60);
};

enum class AllreduceAlgorithm {
  kRing,             // Gloo's ring (bandwidth-optimal, 2(n-1) steps)
  kHalvingDoubling,  // Gloo's bcube with base 2: recursive halving/doubling (any number of
                     // ranks; its advantage is at 2^k)
};

// Connects this rank to its job and makes the group the process's current one.
Status ConnectProcessGroup(const ProcessGroupOptions& options);
// Closes the current group's connections.
Status DisconnectProcessGroup();
// The current group's rank and size; 0 and 1 when none is connected.
int ProcessRank();
int ProcessWorldSize();

// data[0, count) becomes the sum over every rank's data, in place.
Status ProcessAllreduceSum(float* data, size_t count, uint32_t tag,
                           AllreduceAlgorithm algorithm = AllreduceAlgorithm::kRing);
// Returns when every rank reached the barrier with this tag.
Status ProcessBarrier(uint32_t tag);
// Rank 0's *value, on every rank (rank 0's is left as it is). Each use needs a key of its own
// within a job.
Status ProcessShareFromRankZero(const std::string& key, std::string* value);

}  // namespace braid

#endif  // BRAID_PROCESS_GROUP_H_
