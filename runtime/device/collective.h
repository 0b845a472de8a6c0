// Collectives on asynchronous devices, with NCCL's semantics.
//
// A collective op (OpSchema::Collective) spans devices: its blobs are one per device. On cpu
// devices it runs once, on the host, as any op. On asynchronous devices (sim, cuda) it runs as one
// kernel per device, a rank: the launcher (runtime/exec/launch_plan.h) queues rank r's kernel on a
// stream of rank r's device, one device after another (a group launch), holding every
// participant's DeviceLock (runtime/device/device_lock.h). Each rank's kernel blocks its stream
// until every rank has reached the collective (its inputs are ready everywhere), does its share,
// and blocks again until every rank has done its share (its outputs are complete everywhere). So a
// rank that is launched while a peer's launch never comes waits forever, as an NCCL kernel spins:
// the device's watchdog turns that into an error naming the collective and the devices.
//
//   class AllreduceOp final : public OperatorBase, public CollectiveOp { ... };
//   void AllreduceOp::RunRank(int rank, CollectiveRendezvous& peers) {
//     ... read own input ...
//     peers.Arrive(rank, "inputs");       // every rank's inputs are ready
//     ... reduce this rank's slice of every input into every output ...
//     peers.Arrive(rank, "outputs");      // every rank's slice is written
//   }
//
// Thread safety: a rendezvous is used by the kernels of one run at a time (an op runs once per
// run, and a run ends after every stream drained); its state is guarded by its mutex.
#ifndef BRAID_RUNTIME_DEVICE_COLLECTIVE_H_
#define BRAID_RUNTIME_DEVICE_COLLECTIVE_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "braid/status.h"
#include "runtime/core/device.h"

namespace braid {

// How a collective over `ranks` reduces (ChooseCollectiveEngine).
enum class CollectiveEngine {
  kHost,         // every rank a cpu device: one pass on the host
  kRankKernels,  // braid's own ranks that wait for their peers: kernels meeting at a
                 // CollectiveRendezvous on sim; on CUDA ranks that share a physical GPU, the
                 // device-side all-reduce, whose streams wait on each other's events
  kNccl,         // CUDA ranks, each on a physical GPU of its own
};
const char* CollectiveEngineName(CollectiveEngine engine);  // "host", "rank kernels", "NCCL"

// The engine for ranks on `ranks` (distinct logical devices), rank r running on physical device
// physical[r] (runtime/core/device_context.h PhysicalDevice). NCCL refuses two ranks on one GPU, so
// CUDA ranks use it only when their physical GPUs are distinct, and braid's own device-side
// all-reduce when they all share one. InvalidArgument for a mix it cannot serve: device types
// mixed, or CUDA ranks some of which share a GPU and some not (the device-side all-reduce reads
// its peers' memory on one GPU only). Pure function.
Status ChooseCollectiveEngine(const std::vector<Device>& ranks,
                              const std::vector<Device>& physical, CollectiveEngine* engine);
// The same, with each rank's PhysicalDevice.
Status ChooseCollectiveEngine(const std::vector<Device>& ranks, CollectiveEngine* engine);

// Where the ranks of one collective meet. Barriers are numbered per run: each rank passes the same
// sequence of Arrive calls.
class CollectiveRendezvous {
 public:
  // `what` names the collective for reports ("op #40 (Allreduce 'allreduce_w') of net 'train'").
  CollectiveRendezvous(std::string what, std::vector<Device> ranks);

  // Starts a run: every rank's barriers count from zero again.
  void Reset();
  // Blocks rank `rank`'s kernel until every rank has arrived at this barrier (`stage` names it in
  // reports). Throws braid::Error when the rendezvous failed (a peer was abandoned) or the
  // kernel's device was aborted by its watchdog.
  void Arrive(int rank, const std::string& stage);
  // Fails the run's barriers: ranks waiting in Arrive, and ranks arriving later, throw `why`.
  void Fail(const Status& why);

  int size() const { return static_cast<int>(ranks_.size()); }
  const std::vector<Device>& ranks() const { return ranks_; }

 private:
  std::string Waiting(int barrier) const;  // which ranks have not arrived (mu_ held)

  const std::string what_;
  const std::vector<Device> ranks_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<int> passed_;      // guarded by mu_: barriers each rank has reached
  std::vector<int> arrivals_;    // guarded by mu_: ranks that reached barrier b
  Status failed_;                // guarded by mu_
};

// Implemented by collective ops that run as one kernel per device on asynchronous devices.
class CollectiveOp {
 public:
  virtual ~CollectiveOp() = default;
  // The devices of the ranks, in rank order (distinct). Fixed when the op is built.
  virtual std::vector<Device> RankDevices() const = 0;
  // Rank `rank`'s kernel (on its device's stream); throws braid::Error on failure.
  virtual void RunRank(int rank, CollectiveRendezvous& peers) = 0;
  // Called on the launching thread before and after it launches every rank (the group launch).
  // A CUDA stream runs a rank's RunRank on the launching thread to queue it, and one thread
  // queuing NCCL kernels for several GPUs must bracket them in ncclGroupStart/ncclGroupEnd. Such a
  // group must be all or nothing (a rank queued without its peers spins forever), so the NCCL
  // kernel issues its calls in EndRanks, and only when every rank's RunRank succeeded: a rank may
  // fail its checks, or be skipped because the run already failed.
  // EndRanks is called even when a rank failed; it throws braid::Error on failure.
  virtual void BeginRanks() {}
  virtual void EndRanks() {}
  // Called on the launching thread before the group launch takes the participants' DeviceLocks
  // (runtime/device/device_lock.h: a thread holding them may not allocate through an allocator):
  // makes what the launch needs once (communicators, the device-side all-reduce's events), taking
  // the locks itself around raw calls. Throws braid::Error on failure.
  virtual void PrepareRanks() {}
};

}  // namespace braid

#endif  // BRAID_RUNTIME_DEVICE_COLLECTIVE_H_
