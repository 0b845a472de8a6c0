#include "ops/collective/device_allreduce.h"

#include <glog/logging.h>

#include <utility>

#include "braid/status.h"
#include "ops/collective/pairwise_sum.h"
#include "ops/common/cuda_kernel.h"
#include "runtime/core/device_context.h"
#include "runtime/device/cuda/cuda_device.h"

namespace braid {
namespace {

struct SliceArgs {
  float* buffers[DeviceAllreduce::kMaxRanks];
  int64_t begin;  // the rank's slice: elements [begin, begin + count)
  int64_t count;
  float scale;
  int ranks;
};

// Every element of the slice: the pairwise sum over the ranks' buffers, times the scale, written
// to every rank's buffer. Waits for nothing: the stream's event waits ordered it.
__global__ void DeviceAllreduceSliceKernel(const SliceArgs a) {
  BRAID_CUDA_KERNEL_LOOP(i, a.count) {
    const int64_t k = a.begin + i;
    const float sum = PairwiseSum(a.ranks, [&](int r) { return a.buffers[r][k]; }) * a.scale;
    for (int r = 0; r < a.ranks; ++r) a.buffers[r][k] = sum;
  }
}

}  // namespace

void DeviceAllreduce::Failure::Note(cudaError_t e, const char* c, int r) {
  if (e == cudaSuccess || error != cudaSuccess) return;
  error = e;
  call = c;
  rank = r;
}

DeviceAllreduce::DeviceAllreduce(std::string what, std::vector<Device> devices)
    : what_(std::move(what)), devices_(std::move(devices)) {}

DeviceAllreduce::~DeviceAllreduce() {
  for (cudaEvent_t e : in_) cudaEventDestroy(e);
  for (cudaEvent_t e : out_) cudaEventDestroy(e);
}

std::string DeviceAllreduce::Prefix() const { return what_.empty() ? "" : what_ + ": "; }

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

void DeviceAllreduce::Throw(const Failure& failure) const {
  const Status cuda =  // CheckCuda's message: the call, the device and its GPU, CUDA's error
      StatusFromCall([&] { CheckCuda(failure.error, failure.call, devices_[failure.rank]); });
  throw Error(Status(cuda.code(), Prefix() + "braid's device-side all-reduce, rank " +
                                      std::to_string(failure.rank) + ": " + cuda.message()));
}

void DeviceAllreduce::Prepare() {
  if (!in_.empty()) return;
  CheckDevices();
  const int ranks = static_cast<int>(devices_.size());
  CudaDeviceGuard guard(devices_[0]);  // every rank's events live in its GPU's context
  std::vector<cudaEvent_t> in(ranks, nullptr), out(ranks, nullptr);
  Failure failure;
  for (int r = 0; r < ranks && failure.error == cudaSuccess; ++r) {
    failure.Note(cudaEventCreateWithFlags(&in[r], cudaEventDisableTiming), "cudaEventCreate", r);
    failure.Note(cudaEventCreateWithFlags(&out[r], cudaEventDisableTiming), "cudaEventCreate", r);
  }
  if (failure.error != cudaSuccess) {
    for (cudaEvent_t e : in) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    for (cudaEvent_t e : out) {
      if (e != nullptr) cudaEventDestroy(e);
    }
    Throw(failure);
  }
  in_ = std::move(in);
  out_ = std::move(out);
}

void DeviceAllreduce::Launch(const std::vector<float*>& buffers, int64_t numel, float scale,
                             const std::vector<cudaStream_t>& streams) {
  // Invariant: AllreduceOp prepares before it launches, with one buffer and stream per device.
  CHECK(!in_.empty()) << "DeviceAllreduce::Launch before Prepare";
  CHECK_EQ(buffers.size(), devices_.size());
  CHECK_EQ(streams.size(), devices_.size());
  CudaDeviceGuard guard(devices_[0]);  // every rank's stream is in its GPU's context
  Failure failure;
  for (size_t r = 0; r < streams.size(); ++r) {
    failure.Note(cudaEventRecord(in_[r], streams[r]), "cudaEventRecord", static_cast<int>(r));
  }
  if (failure.error != cudaSuccess) Throw(failure);  // nothing waits on the arrivals yet
  QueueSlices(buffers, numel, scale, streams, &failure);
  WaitForSlices(streams, &failure);  // even after a failure: no stream runs ahead of a slice
  if (failure.error != cudaSuccess) Throw(failure);
}

void DeviceAllreduce::QueueSlices(const std::vector<float*>& buffers, int64_t numel, float scale,
                                  const std::vector<cudaStream_t>& streams, Failure* failure) {
  const int ranks = static_cast<int>(devices_.size());
  SliceArgs args{};
  for (int r = 0; r < ranks; ++r) args.buffers[r] = buffers[r];
  args.scale = scale;
  args.ranks = ranks;
  for (int r = 0; r < ranks; ++r) {
    bool arrived = true;  // stream r waits for every peer's arrival
    for (int q = 0; q < ranks; ++q) {
      if (q == r) continue;
      const cudaError_t waited = cudaStreamWaitEvent(streams[r], in_[q], 0);
      failure->Note(waited, "cudaStreamWaitEvent", r);
      arrived = arrived && waited == cudaSuccess;
    }
    if (arrived) {  // else its slice would read a peer's buffer before the peer's writers ran
      args.begin = numel * r / ranks;
      args.count = numel * (r + 1) / ranks - args.begin;
      DeviceAllreduceSliceKernel<<<CudaBlocks(args.count), kCudaThreads, 0, streams[r]>>>(args);
      failure->Note(cudaGetLastError(), "DeviceAllreduceSliceKernel", r);
    }
    failure->Note(cudaEventRecord(out_[r], streams[r]), "cudaEventRecord", r);
  }
}

void DeviceAllreduce::WaitForSlices(const std::vector<cudaStream_t>& streams, Failure* failure) {
  const int ranks = static_cast<int>(devices_.size());
  for (int r = 0; r < ranks; ++r) {
    for (int q = 0; q < ranks; ++q) {
      if (q == r) continue;
      failure->Note(cudaStreamWaitEvent(streams[r], out_[q], 0), "cudaStreamWaitEvent", r);
    }
  }
}

}  // namespace braid
