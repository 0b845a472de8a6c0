#include "runtime/cuda/pinned_host_pool.h"

#include <cstring>

#include "runtime/cuda/cuda_device.h"
#include "runtime/device_lock.h"

namespace braid {

PinnedHostPool::Buffer* PinnedHostPool::Acquire(size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Buffer* best = nullptr;
    for (Buffer* b : buffers_) {
      if (b->in_use || b->bytes < bytes || (best != nullptr && best->bytes <= b->bytes)) continue;
      const cudaError_t done = cudaEventQuery(b->copied);
      if (done == cudaErrorNotReady) continue;
      CheckCuda(done, "cudaEventQuery", device_);
      best = b;
    }
    if (best != nullptr) {
      best->in_use = true;
      return best;
    }
  }
  auto* made = new Buffer{nullptr, bytes, nullptr, true};
  {
    std::unique_lock<std::mutex> raw = LockDevice(device_);
    CheckCuda(cudaHostAlloc(&made->ptr, bytes, cudaHostAllocPortable), "cudaHostAlloc", device_);
  }
  CheckCuda(cudaEventCreateWithFlags(&made->copied, cudaEventDisableTiming), "cudaEventCreate",
            device_);
  std::lock_guard<std::mutex> lock(mu_);
  buffers_.push_back(made);
  return made;
}

void PinnedHostPool::CopyToDevice(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  Buffer* b = Acquire(bytes);
  std::memcpy(b->ptr, src, bytes);
  const cudaError_t queued = cudaMemcpyAsync(dst, b->ptr, bytes, cudaMemcpyHostToDevice, stream);
  const cudaError_t recorded =
      queued == cudaSuccess ? cudaEventRecord(b->copied, stream) : cudaSuccess;
  {
    std::lock_guard<std::mutex> lock(mu_);
    b->in_use = false;
  }
  CheckCuda(queued, "cudaMemcpyAsync", device_);
  CheckCuda(recorded, "cudaEventRecord", device_);
}

int64_t PinnedHostPool::pinned_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t total = 0;
  for (const Buffer* b : buffers_) total += static_cast<int64_t>(b->bytes);
  return total;
}

}  // namespace braid
