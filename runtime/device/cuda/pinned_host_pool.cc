#include "runtime/device/cuda/pinned_host_pool.h"

#include <algorithm>
#include <cstring>

#include "runtime/device/cuda/cuda_device.h"
#include "runtime/device/device_lock.h"

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

void PinnedHostPool::Release(Buffer* b, bool queued_any, cudaError_t result, const char* call,
                             cudaStream_t stream) {
  const cudaError_t recorded = queued_any ? cudaEventRecord(b->copied, stream) : cudaSuccess;
  {
    std::lock_guard<std::mutex> lock(mu_);
    b->in_use = recorded != cudaSuccess;  // no event behind its queued work: never reuse it
  }
  CheckCuda(result, call, device_);
  CheckCuda(recorded, "cudaEventRecord", device_);
}

void PinnedHostPool::Stage(void* buffer) {
  auto* b = static_cast<Buffer*>(buffer);
  std::memcpy(b->ptr, b->stage_from, b->host_bytes);
}

void PinnedHostPool::CopyToDevice(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  Buffer* b = Acquire(bytes);
  b->stage_from = src;  // read by Stage, which the stream runs after this call returns
  b->host_bytes = bytes;
  cudaError_t result = cudaLaunchHostFunc(stream, &PinnedHostPool::Stage, b);
  const char* call = "cudaLaunchHostFunc";
  const bool staged = result == cudaSuccess;
  if (staged) {
    // cudaMemcpyDefault: `dst` may be on another GPU (CudaDevice::CopyInKernel's fallback).
    result = cudaMemcpyAsync(dst, b->ptr, bytes, cudaMemcpyDefault, stream);
    call = "cudaMemcpyAsync";
  }
  Release(b, staged, result, call, stream);
}

void PinnedHostPool::Deliver(void* buffer) {
  auto* b = static_cast<Buffer*>(buffer);
  std::memcpy(b->deliver_to, b->ptr, b->host_bytes);
}

void PinnedHostPool::CopyToHostAsync(void* dst, const void* src, size_t bytes,
                                     cudaStream_t stream) {
  Buffer* b = Acquire(bytes);
  b->deliver_to = dst;  // read by Deliver, which the stream runs after this call returns
  b->host_bytes = bytes;
  cudaError_t result = cudaMemcpyAsync(b->ptr, src, bytes, cudaMemcpyDeviceToHost, stream);
  const char* call = "cudaMemcpyAsync";
  const bool copied = result == cudaSuccess;
  if (copied) {
    result = cudaLaunchHostFunc(stream, &PinnedHostPool::Deliver, b);
    call = "cudaLaunchHostFunc";
  }
  Release(b, copied, result, call, stream);
}

void PinnedHostPool::CopyToHostNow(void* dst, const void* src, size_t bytes) {
  Buffer* b = Acquire(std::min(bytes, kStagingChunk));
  cudaError_t copied = cudaSuccess;
  const char* call = "cudaMemcpyAsync";
  bool queued_any = false;
  for (size_t done = 0; done < bytes && copied == cudaSuccess;) {
    const size_t n = std::min(bytes - done, kStagingChunk);
    call = "cudaMemcpyAsync";
    copied = cudaMemcpyAsync(b->ptr, static_cast<const char*>(src) + done, n,
                             cudaMemcpyDeviceToHost, cudaStreamLegacy);
    queued_any = queued_any || copied == cudaSuccess;
    if (copied == cudaSuccess) {
      copied = cudaStreamSynchronize(cudaStreamLegacy);
      call = "cudaStreamSynchronize";
    }
    if (copied == cudaSuccess) std::memcpy(static_cast<char*>(dst) + done, b->ptr, n);
    done += n;
  }
  Release(b, queued_any, copied, call, cudaStreamLegacy);
}

int64_t PinnedHostPool::pinned_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t total = 0;
  for (const Buffer* b : buffers_) total += static_cast<int64_t>(b->bytes);
  return total;
}

}  // namespace braid
