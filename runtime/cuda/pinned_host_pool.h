// PinnedHostPool: page-locked host buffers that stage a CUDA device's host-to-device copies.
//
// cudaMemcpyAsync from pageable memory copies through the driver's own staging and returns only
// when the source has been read, so the launching thread would wait for the GPU to reach the copy.
// From pinned memory the copy is a DMA the stream runs later. CopyToDevice copies the pageable
// source into a pinned buffer on the calling thread (the source is ready: its host writer has
// finished before the copy's launch) and queues the DMA on the stream; the buffer is reused only
// after the DMA has run (an event recorded behind it). Buffers are made on first need
// (cudaHostAlloc, under the device's DeviceLock, as every raw call) and kept for the process:
// after the first iteration the pool allocates nothing.
//
// Thread safety: every method may be called from any thread; buffers_ is guarded by mu_.
#ifndef BRAID_RUNTIME_CUDA_PINNED_HOST_POOL_H_
#define BRAID_RUNTIME_CUDA_PINNED_HOST_POOL_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/device.h"

namespace braid {

class PinnedHostPool {
 public:
  explicit PinnedHostPool(const Device& device) : device_(device) {}
  PinnedHostPool(const PinnedHostPool&) = delete;
  PinnedHostPool& operator=(const PinnedHostPool&) = delete;

  // Queues the copy of `bytes` from host memory `src` to device memory `dst` on `stream` (of
  // device_, which is current). Throws braid::Error with the CUDA error on failure.
  void CopyToDevice(void* dst, const void* src, size_t bytes, cudaStream_t stream);
  int64_t pinned_bytes() const;

 private:
  struct Buffer {
    void* ptr = nullptr;
    size_t bytes = 0;
    cudaEvent_t copied = nullptr;  // recorded behind the last DMA out of the buffer
    bool in_use = false;
  };
  // A free buffer of at least `bytes` whose last DMA has run, marked in use; made when none is.
  Buffer* Acquire(size_t bytes);

  const Device device_;
  mutable std::mutex mu_;
  std::vector<Buffer*> buffers_;  // guarded by mu_; never freed (pinned for the process)
};

}  // namespace braid

#endif  // BRAID_RUNTIME_CUDA_PINNED_HOST_POOL_H_
