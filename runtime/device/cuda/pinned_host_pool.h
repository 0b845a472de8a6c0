// PinnedHostPool: page-locked host buffers that stage a CUDA device's copies to and from the host.
//
// cudaMemcpyAsync between pageable memory and a GPU copies through the driver's own staging and
// returns only when the host side has been read or written, so the launching thread would wait
// for the GPU to reach the copy. From or to pinned memory the copy is a DMA the stream runs later.
// The host side is read and written in stream order, as a sim kernel's copy reads and writes it
// on its stream (runtime/device/sim/sim_device.h): by host functions (cudaLaunchHostFunc) that
// CUDA's callback thread runs when the stream gets there, and that call no CUDA API.
//  - CopyToDevice queues a host function that copies the pageable source into a pinned buffer,
//    then the DMA. The source is read when the stream reaches the copy, after everything queued
//    before it, on this stream or on streams it waits for: a device-to-host copy queued earlier
//    has delivered its bytes by then (CopyGPUToCPU on cuda:0, then CopyCPUToGPU of its host
//    output on cuda:1). The source must stay unchanged until then: the executors' later host
//    writers wait for the copy's event.
//  - CopyToHostAsync queues the DMA into a pinned buffer, then a host function that copies it into
//    the pageable destination. The destination holds the bytes once the stream has run what was
//    queued so far: a reader waits for an event recorded on the stream afterwards (the executors'
//    host ops wait for their device parents' events), never for the launch's return.
//  - CopyToHostNow copies synchronously through one pinned buffer of at most kStagingChunk bytes.
// A buffer is reused only after its work (staging, DMA, delivery) has run: an event is recorded
// behind it whenever any of it was queued, even when a later call failed; a buffer whose event
// could not be recorded is never reused.
// Buffers are made on first need (cudaHostAlloc, under the device's DeviceLock, as every raw call)
// and kept for the process: after the first iteration the pool allocates nothing.
//
// Thread safety: every method may be called from any thread; buffers_ is guarded by mu_.
#ifndef BRAID_RUNTIME_DEVICE_CUDA_PINNED_HOST_POOL_H_
#define BRAID_RUNTIME_DEVICE_CUDA_PINNED_HOST_POOL_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/core/device.h"

namespace braid {

class PinnedHostPool {
 public:
  explicit PinnedHostPool(const Device& device) : device_(device) {}
  PinnedHostPool(const PinnedHostPool&) = delete;
  PinnedHostPool& operator=(const PinnedHostPool&) = delete;

  // Queues the copy of `bytes` from host memory `src` to device memory `dst` on `stream` (of
  // device_, which is current; `dst` may be on another GPU). `src` is read when the stream gets
  // there (see the file comment). Throws braid::Error with the CUDA error on failure.
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
    const void* stage_from = nullptr;  // CopyToDevice: what Stage copies into the buffer
    void* deliver_to = nullptr;        // CopyToHostAsync: where Deliver copies the buffer
    size_t host_bytes = 0;             // how many bytes Stage or Deliver copies
  };
  // A free buffer of at least `bytes` whose last DMA has run, marked in use; made when none is.
  Buffer* Acquire(size_t bytes);
  // Releases b once its work is covered: records b's event on `stream` when `queued_any` (some of
  // the buffer's work was queued); a buffer whose event cannot be recorded stays in use for good.
  // Then throws `result` (naming `call`) or the record's failure.
  void Release(Buffer* b, bool queued_any, cudaError_t result, const char* call,
               cudaStream_t stream);
  // cudaLaunchHostFunc's callbacks (no CUDA API): copy a Buffer's stage_from into it, and it into
  // its deliver_to.
  static void Stage(void* buffer);
  static void Deliver(void* buffer);

  const Device device_;
  mutable std::mutex mu_;
  std::vector<Buffer*> buffers_;  // guarded by mu_; never freed (pinned for the process)
};

}  // namespace braid

#endif  // BRAID_RUNTIME_DEVICE_CUDA_PINNED_HOST_POOL_H_
