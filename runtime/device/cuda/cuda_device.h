// CudaDevice, "cuda:N": the device interface (runtime/core/device_context.h) over the CUDA runtime.
// Built only with the CUDA backend (BRAID_WITH_CUDA); it registers itself with GetDeviceContext
// when libbraid loads.
//  - Streams are non-blocking CUDA streams, made on first use. Launch runs the task's Execute on
//    the calling thread with the device current and the stream as CurrentCudaStream(): a CUDA
//    kernel task queues its kernels there and returns without waiting for them.
//  - Events are CUDA events without timing: Record is cudaEventRecord, Wait cudaStreamWaitEvent
//    (any device's event), HostWait cudaEventSynchronize.
//  - Memory: RawAllocate and RawFree are cudaMalloc and cudaFree (a failed cudaMalloc is
//    ResourceExhausted, so the CachingAllocator releases its cache and retries); tensors take
//    memory through the device's CachingAllocator (runtime/device/caching_allocator.h). capacity
//    and free bytes come from cudaMemGetInfo.
//  - Copies: CopyInKernel queues on the current stream: host to device and device to host through
//    pinned staging buffers (runtime/device/cuda/pinned_host_pool.h), so the launching thread does
//    not wait; the host side is read or written when the stream gets there, as on sim (a
//    device-to-host copy lands in the host buffer then: readers wait for the stream's event, as
//    the executors' host ops do; a host-to-device copy reads its source then, after the copies
//    queued before it have delivered theirs); between physical GPUs
//    cudaMemcpyPeerAsync (peer access is enabled between every pair of GPUs braid uses that
//    allows it); otherwise cudaMemcpyAsync (device to device between logical devices of one GPU).
//    CopyToHost and CopyFromHost synchronise the device first, then copy and wait for the copy
//    (CopyToHost through pinned staging).
//  - Logical devices (runtime/device/device_mapping.h): BRAID_CUDA_DEVICES, read once with the GPU
//  count,
//    lists the physical GPU of cuda:0, cuda:1, ... ("0,0": two logical GPUs on GPU 0; default:
//    the identity over every GPU). A logical device has its own streams, caching allocator and
//    pinned pool; every CUDA call runs with its physical GPU current; errors name both
//    ("cudaMalloc on cuda:1 (physical GPU 0): ..."). Synchronize and a raw allocation synchronise
//    the physical GPU (every logical device on it). A malformed mapping or a GPU the machine
//    lacks makes Get throw InvalidArgument naming BRAID_CUDA_DEVICES.
// Get throws braid::Error carrying the CUDA error (e.g. "no CUDA-capable device is detected") for a
// device that does not exist. It first ran on an H200 in the GPU acceptance run of 2026-11-27.
//
// Thread safety: as runtime/core/device_context.h. Devices live for the whole process.
#ifndef BRAID_RUNTIME_DEVICE_CUDA_CUDA_DEVICE_H_
#define BRAID_RUNTIME_DEVICE_CUDA_CUDA_DEVICE_H_

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/device_context.h"
#include "runtime/device/cuda/pinned_host_pool.h"

namespace braid {

// Number of usable (logical) CUDA devices; 0 (with the CUDA error, or the mapping's, in *why_none)
// when there is none. Read once per process, with the mapping.
int CudaDeviceCount(std::string* why_none = nullptr);

// Makes the physical GPU of logical device `device` (which exists) the calling thread's CUDA
// device while it lives.
class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(const Device& device);
  ~CudaDeviceGuard();
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  const Device device_;
  int previous_ = 0;
  bool changed_ = false;
};

// The CUDA stream of the kernel the calling thread launches (null outside CudaStream::Launch: the
// legacy default stream).
cudaStream_t CurrentCudaStream();

// Throws braid::Error naming `call`, the device and the CUDA error unless `err` is cudaSuccess.
void CheckCuda(cudaError_t err, const char* call, const Device& device);

class CudaStream;

class CudaDevice final : public DeviceContext {
 public:

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
  Device physical_device() const override { return physical_; }
  std::string name() const override;  // "cuda:1 (physical GPU 0)" under BRAID_CUDA_DEVICES

  void CopyInKernel(void* dst, const Device& dst_device, const void* src, const Device& src_device,
                    size_t bytes) override;
  void CopyToHost(void* host_dst, const void* device_src, size_t bytes) override;
  void CopyFromHost(void* device_dst, const void* host_src, size_t bytes) override;
  // cudaEventRecord on the application's cudaStream_t (null: the legacy default stream).
  std::unique_ptr<Event> MarkApplicationStream(void* native_stream) override;
  // Memory cudaPointerGetAttributes places on this device's GPU (device or managed memory).
  void CheckApplicationMemory(const void* data, const std::string& what) const override;

 private:
  CudaDevice(int id, int physical);

  const Device device_;
  const Device physical_;  // cuda:<the physical GPU's CUDA ordinal>
  std::unique_ptr<Allocator> allocator_;
  PinnedHostPool pinned_;
  std::mutex streams_mu_;
  std::vector<std::unique_ptr<CudaStream>> streams_;  // guarded by streams_mu_; never shrinks
};

}  // namespace braid

#endif  // BRAID_RUNTIME_DEVICE_CUDA_CUDA_DEVICE_H_
