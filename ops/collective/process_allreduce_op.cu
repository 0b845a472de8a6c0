// ProcessAllreduce on CUDA devices (ops/collective/process_allreduce_op.h): the NCCL engine.
//
// The op's replicas are this process's GPUs (replica r's tensors on one device, each replica on
// its own). An NCCL communicator spans the replicas of every process of CurrentProcessGroup()
// (NcclProcessClique, ops/collective/nccl_process_clique.h: every process must hold as many, and
// local device i of group rank g is NCCL rank g * local + i), one per `tag` (ProcessAllreduceNcclKey),
// made on the op's first run. The tag plays Gloo's part: collectives that may run at the same
// time have distinct tags, so they never share a communicator, and ops that share one (the
// data-parallel builder gives its chained buckets one tag) run one after another, queued in the
// same order on every rank: a `dag` net runs the ops that wait for other processes one at a time,
// in net order (runtime/exec/process_collective_order.h), as a `simple` net does anyway.
//
// Each replica queues one ncclAllReduce per tensor. Several replicas go through the launcher's
// group launch (runtime/device/collective.h: PrepareRanks, then BeginRanks/RunRank/EndRanks
// holding the participants' DeviceLocks): RunRank only checks its replica and notes its buffers
// and stream, and EndRanks queues every replica's calls in NCCL groups, and only when every
// replica got there (a replica queued without its peers spins on its GPU forever). A group holds
// at most kMaxCallsPerGroup calls (older NCCLs refuse more), so many tensors take several groups,
// each with every replica's calls for its tensors. A single replica is no group launch (the
// launcher calls Run), so Run queues its calls itself, holding the device's DeviceLock as a group
// launch would.
//
// `average` is ncclAvg: the mean over every replica of every process. That is the weighted mean
// of the ranks' means that the Gloo engine computes when every rank has as many replicas and the
// same weight, which the collective-order check before the first run compares for cuda ops
// (runtime/exec/process_collective_order.h). `algorithm` is Gloo's: NCCL picks its own.
//
// Not handled: NCCL has no timeout here. A rank that fails before queueing (its checks, or a run
// that already failed) queues nothing, and its peers' kernels then wait on their GPUs until the
// process ends; the Gloo engine's timeouts do not apply.
#include <nccl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "braid/status.h"
#include "ops/collective/nccl_check.h"
#include "ops/collective/nccl_process_clique.h"
#include "ops/collective/process_allreduce_op.h"
#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "runtime/core/op_registry.h"
#include "runtime/device/collective.h"
#include "runtime/device/device_lock.h"
#include "runtime/dist/process_group.h"

namespace braid {
namespace {

// Calls in one NCCL group (tensors x replicas, split across groups by tensors beyond this).
constexpr int kMaxCallsPerGroup = 1024;

class ProcessAllreduceCudaOp final : public OperatorBase, public CollectiveOp {
 public:
  ProcessAllreduceCudaOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws), a_(ReadProcessAllreduceArgs(def)) {}

  // One replica: its calls alone (no group launch). Several replicas reach Run only where the
  // launcher found no group launch for them (replicas on the host, or two on one device).
  void Run() override {
    devices_ = RankDevices();
    if (devices_.size() != 1) {
      ThrowInvalidArgument("its replicas are on " + DevicesText(devices_) +
                           ": the cuda engine (NCCL) needs each on a cuda device of its own");
    }
    if (!(devices_[0] == device())) {
      ThrowInvalidArgument("its replica is on " + devices_[0].ToString() + ", the op on " +
                           device().ToString() + ": run the op on its replica's device");
    }
    Prepare();
    BeginRanks();
    RecordReplica(0);
    std::unique_lock<std::mutex> lock = LockDevice(devices_[0]);
    QueueAll();
  }

  // Replica r's device: that of its first tensor, input r * tensors.
  std::vector<Device> RankDevices() const override {
    std::vector<Device> devices;
    for (int r = 0; r < a_.replicas; ++r) devices.push_back(Input(r * a_.tensors).device());
    return devices;
  }

  void PrepareRanks() override {
    devices_ = RankDevices();
    Prepare();
  }

  void BeginRanks() override {
    calls_.assign(a_.replicas, ReplicaCalls{});  // nothing from the last launch counts as ready
  }

  // Queues nothing: see EndRanks.
  void RunRank(int rank, CollectiveRendezvous&) override { RecordReplica(rank); }

  void EndRanks() override {
    for (const ReplicaCalls& c : calls_) {
      if (!c.ready) return;  // that replica reported its failure; no replica may start alone
    }
    QueueAll();
  }

 private:
  // One replica's calls, noted for QueueAll.
  struct ReplicaCalls {
    std::vector<float*> buffers;  // its tensors, in place
    std::vector<size_t> counts;
    cudaStream_t stream = nullptr;
    bool ready = false;  // checked, and noted this far
  };

  // The devices must be cuda GPUs of their own (NCCL refuses two ranks on one GPU); then the
  // communicator, made on the first run.
  void Prepare() {
    for (int r = 0; r < static_cast<int>(devices_.size()); ++r) {
      if (devices_[r].type != DeviceType::kCuda) {
        ThrowInvalidArgument("the cuda engine (NCCL) reduces cuda tensors, and replica " +
                             std::to_string(r) + "'s input " +
                             DescribeInput(*this, r * a_.tensors) + " is on " +
                             devices_[r].ToString());
      }
    }
    CollectiveEngine engine = CollectiveEngine::kNccl;
    const Status chosen = ChooseCollectiveEngine(devices_, &engine);
    if (!chosen.ok()) throw Error(chosen);
    if (engine != CollectiveEngine::kNccl) {
      ThrowInvalidArgument("NCCL refuses two ranks on one GPU, and its replicas' devices " +
                           DevicesText(devices_) +
                           " share one (BRAID_CUDA_DEVICES); across processes each replica "
                           "needs a GPU of its own");
    }
    ProcessGroup* group = CurrentProcessGroup();
    if (group == nullptr) {
      throw Error(Status::FailedPrecondition(ProcessAllreduceLabel(def()) +
                                             " needs a process group: none is set "
                                             "(braid::SetProcessGroup)"));
    }
    comms_ = &NcclProcessClique(devices_, *group, ProcessAllreduceNcclKey(a_.tag));
  }

  // Checks replica r's tensors (float32, replica 0's shapes) and notes them with the stream the
  // calling thread queues on.
  void RecordReplica(int r) {
    ReplicaCalls& c = calls_.at(r);
    c = ReplicaCalls{};
    for (int b = 0; b < a_.tensors; ++b) {
      const int i = r * a_.tensors + b;
      CheckInputType(*this, i, {DType::kFloat32});
      if (!(Input(i).device() == devices_[r])) {
        ThrowInvalidArgument("input " + DescribeInput(*this, i) + " is on " +
                             Input(i).device().ToString() + ", not on its replica's device " +
                             devices_[r].ToString());
      }
      if (Input(i).shape() != Input(b).shape()) {
        ThrowInvalidArgument("input " + DescribeInput(*this, i) +
                             " must have the shape of input " + DescribeInput(*this, b));
      }
      c.buffers.push_back(Output(i)->mutable_data<float>());  // in place: the same tensor
      c.counts.push_back(static_cast<size_t>(Input(i).numel()));
    }
    c.stream = CurrentCudaStream();
    c.ready = true;
  }

  // Every replica's calls in NCCL groups (one thread drives several GPUs), each group holding
  // every replica's calls for its share of the tensors.
  void QueueAll() {
    const int replicas = static_cast<int>(calls_.size());
    const int per_group = std::max(1, kMaxCallsPerGroup / replicas);
    for (int first = 0; first < a_.tensors; first += per_group) {
      const int last = std::min(a_.tensors, first + per_group);
      CheckNccl(ncclGroupStart(), "ncclGroupStart", devices_);
      ncclResult_t queued = ncclSuccess;
      for (int r = 0; r < replicas && queued == ncclSuccess; ++r) {
        const ReplicaCalls& c = calls_[r];
        for (int b = first; b < last && queued == ncclSuccess; ++b) {
          queued = ncclAllReduce(c.buffers[b], c.buffers[b], c.counts[b], ncclFloat,
                                 a_.average ? ncclAvg : ncclSum, (*comms_)[r], c.stream);
        }
      }
      const ncclResult_t ended = ncclGroupEnd();  // always closes the group it opened
      CheckNccl(queued, "ncclAllReduce", devices_);
      CheckNccl(ended, "ncclGroupEnd", devices_);
    }
  }

  const ProcessAllreduceArgs a_;
  std::vector<Device> devices_;                    // per launch, on the launching thread
  const std::vector<ncclComm_t>* comms_ = nullptr;  // the clique of devices_
  std::vector<ReplicaCalls> calls_;                 // per launch, on the launching thread
};

}  // namespace

BRAID_REGISTER_OPERATOR(ProcessAllreduce, kCuda, "", ProcessAllreduceCudaOp);
BRAID_REGISTER_OPERATOR(ProcessAllreduce, kCuda, "NCCL", ProcessAllreduceCudaOp);

}  // namespace braid
