// CudaDevice, "cuda:N": the device interface (runtime/device_context.h) over the CUDA runtime. Built
// only with the CUDA backend (BRAID_WITH_CUDA); it registers itself with GetDeviceContext when
// libbraid loads.
//  - Streams are non-blocking CUDA streams, made on first use. Launch runs the task's Execute on
//    the calling thread with the device current and the stream as CurrentCudaStream(): a CUDA
//    kernel task queues its kernels there and returns without waiting for them.
//  - Events are CUDA events without timing: Record is cudaEventRecord, Wait cudaStreamWaitEvent
//    (any device's event), HostWait cudaEventSynchronize.
//  - Memory: RawAllocate and RawFree are cudaMalloc and cudaFree (a failed cudaMalloc is
//    ResourceExhausted, so the CachingAllocator releases its cache and retries); tensors take
//    memory through the device's CachingAllocator (runtime/caching_allocator.h). capacity and free
//    bytes come from cudaMemGetInfo.
//  - Copies: CopyInKernel queues on the current stream: host to device through pinned staging
//    buffers (runtime/cuda/pinned_host_pool.h), so the launching thread does not wait; between
//    GPUs cudaMemcpyPeerAsync (peer access is enabled between every pair of devices braid uses
//    that allows it); otherwise cudaMemcpyAsync. CopyToHost and CopyFromHost synchronise the
//    device first, then copy.
// Get throws braid::Error carrying the CUDA error (e.g. "no CUDA-capable device is detected") for a
// device that does not exist. No code in this file has run on a GPU yet (these machines have none).
//
// Thread safety: as runtime/device_context.h. Devices live for the whole process.
#ifndef BRAID_RUNTIME_CUDA_CUDA_DEVICE_H_
#define BRAID_RUNTIME_CUDA_CUDA_DEVICE_H_

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/cuda/pinned_host_pool.h"
#include "runtime/device_context.h"

namespace braid {

// Number of usable CUDA devices; 0 (with the CUDA error in *why_none) when there is none.
int CudaDeviceCount(std::string* why_none = nullptr);

// The CUDA stream of the kernel the calling thread launches (null outside CudaStream::Launch: the
// legacy default stream).
cudaStream_t CurrentCudaStream();

// Throws braid::Error naming `call`, the device and the CUDA error unless `err` is cudaSuccess.
void CheckCuda(cudaError_t err, const char* call, const Device& device);

class CudaStream;

class CudaDevice final : public DeviceContext {
 public:
  static constexpr int kMaxStreams = 64;

  // Device cuda:id, made on first use; throws braid::Error with the CUDA error when it is absent.
  static CudaDevice* Get(int id);

  const Device& device() const override { return device_; }
  bool is_async() const override { return true; }
  Stream* stream(int index) override;
  std::unique_ptr<Event> CreateEvent(std::string label) override;
  void Synchronize() override;

  void* RawAllocate(size_t bytes) override;
  void RawFree(void* ptr, size_t bytes) override;
  int64_t capacity_bytes() const override;
  int64_t free_bytes() const override;
  Allocator* allocator() override { return allocator_.get(); }

  void CopyInKernel(void* dst, const Device& dst_device, const void* src, const Device& src_device,
                    size_t bytes) override;
  void CopyToHost(void* host_dst, const void* device_src, size_t bytes) override;
  void CopyFromHost(void* device_dst, const void* host_src, size_t bytes) override;

 private:
  explicit CudaDevice(int id);

  const Device device_;
  std::unique_ptr<Allocator> allocator_;
  PinnedHostPool pinned_;
  std::mutex streams_mu_;
  std::vector<std::unique_ptr<CudaStream>> streams_;  // guarded by streams_mu_; never shrinks
};

}  // namespace braid

#endif  // BRAID_RUNTIME_CUDA_CUDA_DEVICE_H_
