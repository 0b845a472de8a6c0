// PinnedHostPool: page-locked host buffers that stage a CUDA device's copies to and from the host.
//
// cudaMemcpyAsync between pageable memory and a GPU copies through the driver's own staging and
// returns only when the host side has been read or written, so the launching thread would wait
// for the GPU to reach the copy. From or to pinned memory the copy is a DMA the stream runs later.
//  - CopyToDevice copies the pageable source into a pinned buffer on the calling thread (the
//    source is ready: its host writer has finished before the copy's launch) and queues the DMA.
//  - CopyToHostAsync queues the DMA into a pinned buffer, then (cudaLaunchHostFunc) a memcpy into
//    the pageable destination that CUDA's callback thread runs once the DMA has landed. The
//    destination holds the bytes once the stream has run what was queued so far: a reader waits
//    for an event recorded on the stream afterwards (the executors' host ops wait for their device
//    parents' events), never for the launch's return.
//  - CopyToHostNow copies synchronously through one pinned buffer of at most kStagingChunk bytes.
// A buffer is reused only after its DMA (and delivery) has run (an event recorded behind it).
// Buffers are made on first need (cudaHostAlloc, under the device's DeviceLock, as every raw call)
// and kept for the process: after the first iteration the pool allocates nothing.
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
  // Queues the copy of `bytes` from device memory `src` to host memory `dst` on `stream` (see the
  // file comment: `dst` is written on CUDA's callback thread, after the stream's earlier work).
  void CopyToHostAsync(void* dst, const void* src, size_t bytes, cudaStream_t stream);
  // Copies now, on the legacy default stream, in chunks; the caller has synchronised the device.
  void CopyToHostNow(void* dst, const void* src, size_t bytes);
  int64_t pinned_bytes() const;

  static constexpr size_t kStagingChunk = size_t{8} << 20;

 private:
  struct Buffer {
    void* ptr = nullptr;
    size_t bytes = 0;
    cudaEvent_t copied = nullptr;  // recorded behind the last DMA (and delivery) of the buffer
    bool in_use = false;
    void* deliver_to = nullptr;    // CopyToHostAsync: where the callback copies the bytes
    size_t deliver_bytes = 0;
  };
  // A free buffer of at least `bytes` whose last DMA has run, marked in use; made when none is.
  Buffer* Acquire(size_t bytes);
  // Records b's event on `stream` behind `queued` (the buffer's work) and releases it; throws the
  // first failure.
  void Release(Buffer* b, cudaError_t queued, const char* call, cudaStream_t stream);
  // cudaLaunchHostFunc's callback: copies a Buffer's bytes to its deliver_to.
  static void Deliver(void* buffer);

  const Device device_;
  mutable std::mutex mu_;
  std::vector<Buffer*> buffers_;  // guarded by mu_; never freed (pinned for the process)
};

}  // namespace braid

#endif  // BRAID_RUNTIME_CUDA_PINNED_HOST_POOL_H_
