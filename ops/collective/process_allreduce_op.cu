// ProcessAllreduce on CUDA devices (ops/collective/process_allreduce_op.h): the NCCL engine.
//
// The op's replicas are this process's GPUs (replica r's tensors on one device, each replica on
// its own). One NCCL communicator spans the replicas of every process of CurrentProcessGroup()
// (NcclProcessClique, ops/collective/nccl_process_clique.h: every process must hold as many, and
// local device i of group rank g is NCCL rank g * local + i), made on the first run under
// kProcessAllreduceNcclKey, a key that names no device, so that processes on different GPUs meet
// (a process that then asks for it with other local devices gets FailedPrecondition). Every
// ProcessAllreduce of the process shares it: NCCL orders the operations
// of one communicator as they are queued, and ranks queue them in the same order because a `dag`
// net runs the ops that wait for other processes one at a time, in net order
// (runtime/exec/process_collective_order.h), as a `simple` net does anyway.
//
// Each replica queues one ncclAllReduce per tensor. Several replicas go through the launcher's
// group launch (runtime/device/collective.h: PrepareRanks, then BeginRanks/RunRank/EndRanks
// holding the participants' DeviceLocks): RunRank only checks its replica and notes its buffers
// and stream, and EndRanks queues every replica's calls between ncclGroupStart and ncclGroupEnd,
// and only when every replica got there (a replica queued without its peers spins on its GPU
// forever). A single replica is no group launch (the launcher calls Run), so Run queues its calls
// itself, holding the device's DeviceLock as a group launch would.
//
// `average` is ncclAvg: the mean over every replica of every process. That is the weighted mean
// of the ranks' means that the Gloo engine computes when every rank has the same weight (every
// process holds as many replicas, and the collective-order check before the first run refuses
// ranks whose cuda ProcessAllreduces have different weights). `tag` and `algorithm` are the Gloo
// engine's: NCCL picks its own algorithm, and the tag only enters that check.
#include <nccl.h>

#include <string>
#include <vector>

#include "braid/status.h"
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

void CheckNccl(ncclResult_t result, const char* call, const std::string& label) {
  if (result == ncclSuccess || result == ncclInProgress) return;
  throw Error(Status::Internal(label + ": NCCL " + call + ": " + ncclGetErrorString(result)));
}

class ProcessAllreduceCudaOp final : public OperatorBase, public CollectiveOp {
 public:
  ProcessAllreduceCudaOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws), a_(ReadProcessAllreduceArgs(def)) {}

  // One replica: its calls alone (no group launch).
  void Run() override {
    devices_ = RankDevices();
    if (devices_.size() != 1) {
      ThrowInvalidArgument("its " + std::to_string(devices_.size()) +
                           " replicas must be on distinct cuda devices, one replica per device");
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
    for (const Device& d : devices_) {
      if (d.type != DeviceType::kCuda) {
        ThrowInvalidArgument("the cuda engine (NCCL) reduces cuda tensors, and a replica is on " +
                             d.ToString());
      }
    }
    CollectiveEngine engine = CollectiveEngine::kNccl;
    const Status chosen = ChooseCollectiveEngine(devices_, &engine);
    if (!chosen.ok()) throw Error(chosen);
    if (engine != CollectiveEngine::kNccl) {
      ThrowInvalidArgument("NCCL refuses two ranks on one GPU, and its replicas' devices share "
                           "one (BRAID_CUDA_DEVICES); across processes each replica needs a GPU "
                           "of its own");
    }
    ProcessGroup* group = CurrentProcessGroup();
    if (group == nullptr) {
      throw Error(Status::FailedPrecondition(ProcessAllreduceLabel(def()) +
                                             " needs a process group: none is set "
                                             "(braid::SetProcessGroup)"));
    }
    comms_ = &NcclProcessClique(devices_, *group, kProcessAllreduceNcclKey);
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

  // Every replica's calls in one NCCL group (one thread drives several GPUs).
  void QueueAll() {
    const std::string label = ProcessAllreduceLabel(def());
    CheckNccl(ncclGroupStart(), "ncclGroupStart", label);
    ncclResult_t queued = ncclSuccess;
    for (size_t r = 0; r < calls_.size() && queued == ncclSuccess; ++r) {
      const ReplicaCalls& c = calls_[r];
      for (size_t b = 0; b < c.buffers.size() && queued == ncclSuccess; ++b) {
        queued = ncclAllReduce(c.buffers[b], c.buffers[b], c.counts[b], ncclFloat,
                               a_.average ? ncclAvg : ncclSum, (*comms_)[r], c.stream);
      }
    }
    const ncclResult_t ended = ncclGroupEnd();  // always closes the group it opened
    CheckNccl(queued, "ncclAllReduce", label);
    CheckNccl(ended, "ncclGroupEnd", label);
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
