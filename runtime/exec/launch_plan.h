// LaunchPlan: how the executors run a net whose ops are on asynchronous devices (sim, cuda).
//
// A host op (a cpu device) runs on the executor's thread as always, after waiting on the host for
// the events of its parents that ran on a device. A device op is launched: on the executor's
// thread its outputs are sized from its schema's shape inference (allocating on the host, as a
// CUDA launcher does; when that changes a tensor's shape or memory, the thread first waits for the
// op's parents, so no queued kernel sees the change), then its stream gets a wait for the event of
// every parent on another stream, its kernel, and the record of its own event. The launch returns
// without waiting for the kernel. Net::Run ends once every stream the net used has drained, with
// the first error any kernel raised (OpLabel'd).
//
// The event edges are exactly planner/dataflow.h's edges: a device op waits on its stream for each
// parent on another stream (a parent on its own stream is ordered by the stream; a host parent
// has finished before the launch), a host op waits on the host for each parent on a device.
// PlanWaits computes them; tests compare them with the dataflow graph.
//
// Streams: op i runs on stream stream_of[i] of its device, a fixed function the executor chooses
// (SimpleNet: stream 0; DagNet: its chain's, runtime/exec/dag_net.h), so a trace reads the same run
// after run.
//
// Collectives (runtime/device/collective.h) whose blobs are on several asynchronous devices launch
// one kernel per device, a rank, on stream stream_of[i] of each rank's device, in one group launch
// that holds the participants' DeviceLocks (runtime/device/device_lock.h); each rank waits on its
// stream for the parents on its device (rank 0 also for parents elsewhere), and a child waits for
// the rank on its own device (rank 0's when it has none: it finishes only after every rank's
// share).
//
// An op whose output sizes the launcher cannot know (its shape inference cannot tell them, or an
// output it writes in place changes shape) runs synchronously: the executor's thread waits for its
// parents and runs the kernel itself, with the op's device current. Kernels run with their op's
// intra-op threads (runtime/exec/net.h), on whichever thread runs them.
//
// Thread safety: built once with its net; RunOrLaunch may be called concurrently for different
// ops (the executor's guarantee that one op is run by one thread at a time holds). Each op's
// launch state is touched by the thread launching it, then by its stream's thread while the
// kernel runs, ordered by the stream's queue.
#ifndef BRAID_RUNTIME_EXEC_LAUNCH_PLAN_H_
#define BRAID_RUNTIME_EXEC_LAUNCH_PLAN_H_

#include <memory>
#include <vector>

#include "braid/status.h"
#include "planner/dataflow.h"
#include "runtime/core/device.h"
#include "runtime/core/device_context.h"

namespace braid {

class Net;
class OperatorBase;

// The waits of one op: parents whose events it waits for on its stream (a device op) or on the
// host (a host op), and every parent on a device (what its launcher waits for before it changes a
// tensor the parents may still use).
struct OpWaits {
  std::vector<int> on_stream;
  std::vector<int> on_host;
  std::vector<int> device_parents;
};

// The waits of every op of `g`, whose op i runs on `devices[i]`, stream `stream_of[i]`.
std::vector<OpWaits> PlanWaits(const DataflowGraph& g, const std::vector<Device>& devices,
                               const std::vector<int>& stream_of);

class LaunchPlan {
 public:
  // For `net`, whose dataflow graph is `g`; stream_of[i] as in the file comment.
  LaunchPlan(Net* net, const DataflowGraph& g, const std::vector<int>& stream_of);
  ~LaunchPlan();
  LaunchPlan(const LaunchPlan&) = delete;
  LaunchPlan& operator=(const LaunchPlan&) = delete;

  // Runs a host op (after its device parents) or launches a device op. Returns an error raised on
  // the calling thread (a host op's, or a launch's); kernels report theirs to the net.
  Status RunOrLaunch(OperatorBase& op);
  // Blocks until every stream the net launched on has run all it was given; then throws the first
  // error a stream's Synchronize threw, if any.
  void Finish();

  // Whether any op of `def` runs on an asynchronous device (then its executor needs a plan).
  static bool NeedsPlan(const NetDef& def);
  // Mutation testing: plans built afterwards leave out op `child`'s wait for op `parent`
  // (-1, -1: none), so a test can show that a missing wait is caught.
  static void DropWaitForTesting(int child, int parent);

 private:
  class OpLaunch;
  class RankLaunch;

  // Makes op i's rank kernels when it is a collective over several asynchronous devices.
  void AddRanks(int i, int stream_index);
  // The event a waiter on `stream` (null: the host) waits for to see op p's work; null when the
  // stream's own order already guarantees it.
  Event* EventFor(int p, const Stream* stream) const;
  void PlanRankWaits(int i, const DataflowGraph& g, const std::vector<Device>& devices);
  Status Launch(OpLaunch& l);
  Status LaunchRanks(OpLaunch& l);
  Status RunSynchronously(OpLaunch& l);
  // Runs one rank's kernel (on its stream's thread); its error is labelled with the rank.
  Status RunRank(RankLaunch& rank);

  Net* const net_;
  std::vector<std::unique_ptr<OpLaunch>> ops_;  // by op index
  std::vector<Stream*> streams_;                // every stream some op runs on
};

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_LAUNCH_PLAN_H_
