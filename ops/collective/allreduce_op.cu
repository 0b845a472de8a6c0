// Allreduce on CUDA devices (ops/collective/allreduce_op.h): NCCL, or braid's device-side
// all-reduce where the ranks share one physical GPU.
//
// Each rank is one logical GPU. The launcher queues the ranks from one thread inside one group
// launch (runtime/device/collective.h: PrepareRanks, then BeginRanks/RunRank/EndRanks holding the
// participants' DeviceLocks). PrepareRanks picks the engine (ChooseCollectiveEngine: NCCL when
// every rank has a physical GPU of its own, braid's DeviceAllreduce when all share one, which NCCL
// refuses) and makes what it needs: the NCCL communicators, or the device-side all-reduce's
// events.
// RunRank only checks its rank and notes its buffers and stream; EndRanks queues every rank only
// when every rank got there: NCCL, every ncclAllReduce between ncclGroupStart and ncclGroupEnd (as
// NCCL requires when one thread drives several GPUs); braid's device-side all-reduce, its event
// waits and slice kernels in one Launch. A group must be all or nothing: an NCCL rank queued while
// a peer is not spins on its GPU forever, so a rank that failed its checks, or was skipped because
// the run had already failed, leaves the whole collective unqueued (the failure is reported by
// that rank). The group launch holds every participant's DeviceLock, so no cudaMalloc (which would
// wait for the GPUs, where a half-launched NCCL all-reduce spins) runs meanwhile on those devices.
// The device-side all-reduce has no kernel that waits (its barriers are event waits between the
// streams), so it cannot hang a GPU.
//
// Communicators: one clique per ordered set of physical GPUs, made with ncclCommInitAll on the
// first launch, under the devices' locks (it allocates device memory: a raw call), and kept for
// the life of the process (NcclClique). A net whose ranks are one device has nothing to reduce:
// Run leaves the blob as it is. engine "NCCL" insists on NCCL: ranks sharing a GPU are then
// InvalidArgument. (Across processes, ProcessAllreduce's NCCL engine reduces:
// ops/collective/process_allreduce_op.cu.)
#include <nccl.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "braid/status.h"
#include "ops/collective/allreduce_op.h"
#include "ops/collective/device_allreduce.h"
#include "ops/collective/nccl_check.h"
#include "ops/common/cuda_kernel.h"
#include "ops/common/op_checks.h"
#include "runtime/core/op_registry.h"
#include "runtime/device/device_lock.h"

namespace braid {
namespace {

// The communicators of each set of physical GPUs (rank r on devices[r]), made once, under the
// devices' locks. Never destroyed: a clique lives as long as the process, as the devices do.
const std::vector<ncclComm_t>& NcclClique(const std::vector<Device>& devices) {
  static auto* const mu = new std::mutex();
  static auto* const cliques = new std::map<std::vector<int>, std::vector<ncclComm_t>>();
  std::vector<int> gpus;
  for (const Device& d : devices) gpus.push_back(PhysicalDevice(d).id);
  std::lock_guard<std::mutex> lock(*mu);
  auto it = cliques->find(gpus);
  if (it != cliques->end()) return it->second;
  std::vector<ncclComm_t> comms(gpus.size());
  {
    DevicesLock raw(devices);  // ncclCommInitAll allocates on every GPU: a raw call
    CheckNccl(ncclCommInitAll(comms.data(), static_cast<int>(gpus.size()), gpus.data()),
              "ncclCommInitAll", devices);
  }
  return cliques->emplace(gpus, std::move(comms)).first->second;
}

class AllreduceCudaOp final : public OperatorBase, public CollectiveOp {
 public:
  AllreduceCudaOp(const OperatorDef& def, Workspace* ws)
      : OperatorBase(def, ws),
        average_(ArgumentReader(def.arg()).Get<int64_t>("average", 0) != 0),
        nccl_only_(def.engine() == "NCCL") {
    RefuseProcessesArgument(def);
  }

  void Run() override {
    if (InputSize() > 1) {
      ThrowInvalidArgument("Allreduce on one CUDA device has " + std::to_string(InputSize()) +
                           " inputs; on CUDA its inputs must be on distinct devices");
    }
    CheckInputType(*this, 0, {DType::kFloat32});  // one rank: the blob is its own sum and mean
  }

  std::vector<Device> RankDevices() const override {
    std::vector<Device> devices;
    for (int i = 0; i < InputSize(); ++i) devices.push_back(Input(i).device());
    return devices;
  }

  void PrepareRanks() override {
    devices_ = RankDevices();
    for (const Device& d : devices_) {
      if (d.type != DeviceType::kCuda) {
        ThrowInvalidArgument("Allreduce's CUDA kernel spans CUDA devices only, not " +
                             d.ToString());
      }
    }
    Status chosen = ChooseCollectiveEngine(devices_, &engine_);
    if (!chosen.ok()) throw Error(chosen);
    if (engine_ == CollectiveEngine::kNccl) {
      comms_ = &NcclClique(devices_);
      return;
    }
    if (nccl_only_) {
      ThrowInvalidArgument("engine NCCL refuses two ranks on one GPU, and " +
                           DevicesText(devices_) +
                           " share one (BRAID_CUDA_DEVICES); the default engine reduces them "
                           "with braid's device-side all-reduce");
    }
    if (device_allreduce_ == nullptr || device_allreduce_->devices() != devices_) {
      device_allreduce_ = std::make_unique<DeviceAllreduce>("", devices_);
    }
    device_allreduce_->Prepare();
  }

  void BeginRanks() override {
    ranks_.assign(InputSize(), RankCall{});  // nothing from the last launch counts as ready
  }

  // Queues nothing: a kernel queued here would start a group that a later rank's failure could
  // leave half-launched (see EndRanks).
  void RunRank(int rank, CollectiveRendezvous&) override {
    CheckInputType(*this, rank, {DType::kFloat32});
    if (Input(rank).shape() != Input(0).shape()) {
      ThrowInvalidArgument("input " + DescribeInput(*this, rank) +
                           " must have the shape of input " + DescribeInput(*this, 0));
    }
    const Tensor& in = Input(rank);
    float* out = Output(rank)->mutable_data<float>();  // in place: the same tensor
    ranks_[rank] = {in.data<float>(), out, static_cast<size_t>(in.numel()), CurrentCudaStream(),
                    true};
  }

  void EndRanks() override {
    for (const RankCall& r : ranks_) {
      if (!r.ready) return;  // that rank reported its failure; no rank may start alone
    }
    if (engine_ == CollectiveEngine::kNccl) {
      QueueNccl();
    } else {
      QueueDeviceAllreduce();
    }
  }

 private:
  void QueueNccl() {
    CheckNccl(ncclGroupStart(), "ncclGroupStart", devices_);
    ncclResult_t queued = ncclSuccess;
    for (size_t rank = 0; rank < ranks_.size() && queued == ncclSuccess; ++rank) {
      const RankCall& r = ranks_[rank];
      queued = ncclAllReduce(r.in, r.out, r.count, ncclFloat, average_ ? ncclAvg : ncclSum,
                             (*comms_)[rank], r.stream);
    }
    const ncclResult_t ended = ncclGroupEnd();  // always closes the group it opened
    CheckNccl(queued, "ncclAllReduce", devices_);
    CheckNccl(ended, "ncclGroupEnd", devices_);
  }

  // The sum times 1/n, as the cpu pass (allreduce_op.cc) scales it: the same bits.
  void QueueDeviceAllreduce() {
    std::vector<float*> buffers;
    std::vector<cudaStream_t> streams;
    for (const RankCall& r : ranks_) {
      buffers.push_back(r.out);  // in place: r.in == r.out
      streams.push_back(r.stream);
    }
    const float scale = average_ ? 1.f / static_cast<float>(ranks_.size()) : 1.f;
    device_allreduce_->Launch(buffers, static_cast<int64_t>(ranks_[0].count), scale, streams);
  }

  // One rank's call, noted by RunRank (on the rank's stream) for EndRanks.
  struct RankCall {
    const float* in = nullptr;
    float* out = nullptr;
    size_t count = 0;
    cudaStream_t stream = nullptr;
    bool ready = false;  // RunRank checked the rank and got this far
  };

  const bool average_;
  const bool nccl_only_;         // engine "NCCL": never braid's device-side all-reduce
  std::vector<Device> devices_;  // per launch, on the launching thread
  CollectiveEngine engine_ = CollectiveEngine::kNccl;  // per launch (PrepareRanks)
  const std::vector<ncclComm_t>* comms_ = nullptr;     // NCCL: the clique of devices_
  std::unique_ptr<DeviceAllreduce> device_allreduce_;  // ranks sharing a GPU: made once
  std::vector<RankCall> ranks_;                        // per launch, on the launching thread
};

}  // namespace

BRAID_REGISTER_OPERATOR(Allreduce, kCuda, "", AllreduceCudaOp);
BRAID_REGISTER_OPERATOR(Allreduce, kCuda, "NCCL", AllreduceCudaOp);

}  // namespace braid
