#include "ops/collective/device_allreduce.h"

#include <cuda/atomic>
#include <glog/logging.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "ops/collective/pairwise_sum.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/device_context.h"
#include "runtime/device_lock.h"

namespace braid {

struct DeviceAllreduce::Flags {
  unsigned long long arrived[kMaxRanks];   // the generation each rank has arrived at
  unsigned long long finished[kMaxRanks];  // blocks of each rank that wrote their share, in all
};

// What a rank's block 0 waited for when it gave up; generation 0: it never did.
struct DeviceAllreduce::Record {
  unsigned long long generation;
  unsigned long long waited_ns;
  int barrier;        // kInputs or kOutputs
  int first_missing;  // the first rank it waited for
  int missing;        // how many ranks it waited for
  int unused;
};

namespace {

constexpr int kInputs = 1;
constexpr int kOutputs = 2;

using Counter = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>;

struct RankArgs {
  float* buffers[DeviceAllreduce::kMaxRanks];
  DeviceAllreduce::Flags* flags;
  DeviceAllreduce::Record* record;  // this rank's, in mapped host memory
  long long numel;
  float scale;
  int ranks;
  int rank;
  unsigned long long generation;
  unsigned long long finished_target;  // generation x blocks per rank
  unsigned long long timeout_ns;
};

__device__ unsigned long long GlobalTimerNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Block 0 of a rank that gave up: what it waited for, for the host (Check).
__device__ void WriteRecord(const RankArgs& a, int barrier, int first_missing, int missing,
                            unsigned long long waited_ns) {
  volatile DeviceAllreduce::Record* r = a.record;
  r->waited_ns = waited_ns;
  r->barrier = barrier;
  r->first_missing = first_missing;
  r->missing = missing;
  __threadfence_system();
  r->generation = a.generation;
}

// Thread 0 of a block: spins until counters[q] >= target for every rank q. False after the
// timeout (block 0 records what it waited for).
__device__ bool WaitForRanks(unsigned long long* counters, unsigned long long target,
                             const RankArgs& a, int barrier) {
  const unsigned long long start = GlobalTimerNs();
  unsigned int pause_ns = 32;
  for (;;) {
    int first_missing = -1, missing = 0;
    for (int q = 0; q < a.ranks; ++q) {
      if (Counter(counters[q]).load(cuda::memory_order_acquire) >= target) continue;
      if (first_missing < 0) first_missing = q;
      ++missing;
    }
    if (missing == 0) return true;
    const unsigned long long waited = GlobalTimerNs() - start;
    if (waited > a.timeout_ns) {
      if (blockIdx.x == 0) WriteRecord(a, barrier, first_missing, missing, waited);
      return false;
    }
    __nanosleep(pause_ns);
    pause_ns = pause_ns < 1024 ? 2 * pause_ns : pause_ns;
  }
}

__global__ void __launch_bounds__(DeviceAllreduce::kThreads)
    DeviceAllreduceRankKernel(const RankArgs a) {
  __shared__ bool all_arrived;
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) {
      __threadfence();  // what the stream's earlier kernels wrote, before the peers look
      Counter(a.flags->arrived[a.rank]).store(a.generation, cuda::memory_order_release);
    }
    all_arrived = WaitForRanks(a.flags->arrived, a.generation, a, kInputs);
  }
  __syncthreads();
  if (!all_arrived) return;
  const long long begin = a.numel * a.rank / a.ranks;
  const long long end = a.numel * (a.rank + 1) / a.ranks;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long k = begin + static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       k < end; k += stride) {
    const float sum = PairwiseSum(a.ranks, [&](int i) { return a.buffers[i][k]; }) * a.scale;
    for (int i = 0; i < a.ranks; ++i) a.buffers[i][k] = sum;
  }
  __threadfence();
  __syncthreads();  // the block's share is written and fenced
  if (threadIdx.x != 0) return;
  Counter(a.flags->finished[a.rank]).fetch_add(1, cuda::memory_order_release);
  if (blockIdx.x == 0) WaitForRanks(a.flags->finished, a.finished_target, a, kOutputs);
}

std::string Seconds(unsigned long long ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", static_cast<double>(ns) / 1e9);
  return text;
}

}  // namespace

DeviceAllreduce::DeviceAllreduce(std::string what, std::vector<Device> devices,
                                 std::chrono::nanoseconds timeout)
    : what_(std::move(what)), devices_(std::move(devices)), timeout_(timeout) {}

DeviceAllreduce::~DeviceAllreduce() {
  if (flags_ != nullptr) {  // the op's runs have drained: no kernel reads them any more
    GetDeviceContext(devices_[0])->allocator()->Free(flags_, sizeof(Flags));
  }
  if (records_ != nullptr) {
    std::unique_lock<std::mutex> raw = LockDevice(devices_[0]);
    cudaFreeHost(records_);
  }
}

std::string DeviceAllreduce::Prefix() const { return what_.empty() ? "" : what_ + ": "; }

std::string DeviceAllreduce::DescribeRanks() const {
  std::string text;
  for (const Device& d : devices_) text += (text.empty() ? "" : ", ") + d.ToString();
  return text + " (physical GPU " + std::to_string(PhysicalDevice(devices_[0]).id) + ")";
}

void DeviceAllreduce::CheckDevices() const {
  bool one_gpu = !devices_.empty() && static_cast<int>(devices_.size()) <= kMaxRanks;
  for (const Device& d : devices_) {
    one_gpu = one_gpu && d.type == DeviceType::kCuda && SharePhysicalDevice(d, devices_[0]);
  }
  if (!one_gpu) {
    std::string text;
    for (const Device& d : devices_) text += (text.empty() ? "" : ", ") + d.ToString();
    throw Error(Status::InvalidArgument(
        Prefix() + "braid's device-side all-reduce needs 1 to " + std::to_string(kMaxRanks) +
        " logical CUDA devices of one physical GPU, not " + text));
  }
}

void DeviceAllreduce::Prepare() {
  if (!failed_.ok()) throw Error(failed_);
  if (flags_ != nullptr) return;
  CheckDevices();
  const Device& lead = devices_[0];
  DeviceContext* context = GetDeviceContext(lead);
  CudaDeviceGuard guard(lead);
  // Loads the rank kernel's module now, outside any launch: under CUDA's lazy loading (the default
  // since CUDA 12.2) its first launch would load it, which can wait for the device while a rank
  // already queued spins for this one.
  cudaFuncAttributes attributes{};
  CheckCuda(cudaFuncGetAttributes(&attributes, DeviceAllreduceRankKernel), "cudaFuncGetAttributes",
            lead);
  int sms = 0, per_sm = 0;
  const int physical = PhysicalDevice(lead).id;
  CheckCuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, physical),
            "cudaDeviceGetAttribute", lead);
  CheckCuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, DeviceAllreduceRankKernel,
                                                          kThreads, 0),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor", lead);
  const int ranks = static_cast<int>(devices_.size());
  if (static_cast<int64_t>(sms) * per_sm < ranks) {
    throw Error(Status::InvalidArgument(Prefix() + std::to_string(ranks) + " ranks of " +
                                        DescribeRanks() + " cannot all be resident on its " +
                                        std::to_string(sms) + " SMs"));
  }
  blocks_ = std::max(1, sms / ranks);
  {
    std::unique_lock<std::mutex> raw = LockDevice(lead);  // a raw call, as RawAllocate's
    CheckCuda(cudaHostAlloc(reinterpret_cast<void**>(&records_), sizeof(Record) * ranks,
                            cudaHostAllocMapped | cudaHostAllocPortable),
              "cudaHostAlloc", lead);
  }
  std::memset(records_, 0, sizeof(Record) * ranks);
  CheckCuda(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_records_), records_, 0),
            "cudaHostGetDevicePointer", lead);
  auto* flags = static_cast<Flags*>(context->allocator()->Allocate(sizeof(Flags)));
  const Flags zero{};
  context->CopyFromHost(flags, &zero, sizeof(Flags));  // synchronous: zero before any launch
  flags_ = flags;
}

void DeviceAllreduce::Launch(const std::vector<float*>& buffers, int64_t numel, float scale,
                             const std::vector<cudaStream_t>& streams) {
  CHECK(flags_ != nullptr) << "DeviceAllreduce::Launch before Prepare";
  const int ranks = static_cast<int>(devices_.size());
  CHECK_EQ(buffers.size(), devices_.size());
  CHECK_EQ(streams.size(), devices_.size());
  RankArgs args{};
  for (int r = 0; r < ranks; ++r) args.buffers[r] = buffers[r];
  args.flags = flags_;
  args.numel = numel;
  args.scale = scale;
  args.ranks = ranks;
  args.generation = ++generation_;
  args.finished_target = generation_ * static_cast<unsigned long long>(blocks_);
  args.timeout_ns = static_cast<unsigned long long>(timeout_.count());
  for (int r = 0; r < ranks; ++r) {
    args.rank = r;
    args.record = device_records_ + r;
    CudaDeviceGuard guard(devices_[r]);
    DeviceAllreduceRankKernel<<<blocks_, kThreads, 0, streams[r]>>>(args);
    CheckCuda(cudaGetLastError(), "DeviceAllreduceRankKernel", devices_[r]);
  }
}

Status DeviceAllreduce::Failure(int rank, const Record& record) const {
  const int missing_rank = record.first_missing;
  const std::string waited_for =
      missing_rank >= 0 && missing_rank < static_cast<int>(devices_.size())
          ? "rank " + std::to_string(missing_rank) + " on " + devices_[missing_rank].ToString()
          : "rank " + std::to_string(missing_rank);
  return Status::DeadlineExceeded(
      Prefix() + "braid's device-side all-reduce over " + DescribeRanks() + ": rank " +
      std::to_string(rank) + " on " + devices_[rank].ToString() + " gave up after " +
      Seconds(record.waited_ns) + " at its '" + (record.barrier == kInputs ? "inputs" : "outputs") +
      "' barrier, waiting for " + waited_for + " (" + std::to_string(record.missing) + " of " +
      std::to_string(devices_.size()) + " ranks missing); the collective refuses every later "
      "launch");
}

Status DeviceAllreduce::Check() {
  if (!failed_.ok() || records_ == nullptr) return failed_;
  for (int r = 0; r < static_cast<int>(devices_.size()); ++r) {
    const volatile Record& record = records_[r];
    if (record.generation == 0) continue;
    Record seen;
    seen.generation = record.generation;
    seen.waited_ns = record.waited_ns;
    seen.barrier = record.barrier;
    seen.first_missing = record.first_missing;
    seen.missing = record.missing;
    failed_ = Failure(r, seen);
    return failed_;
  }
  return Status::OK();
}

}  // namespace braid
