// The CUDA backend's device memory: an Allocator over cudaMalloc/cudaFree for DeviceType::kCuda,
// installed with SetAllocator when libbraid loads (built only with BRAID_CUDA).
//
// Allocate throws braid::Error naming the CUDA error (no device, out of memory). Streams and NCCL
// communicators will live beside this file, one per device.
//
// Thread safety: as runtime/allocator.h; the current device is set per call.
#ifndef BRAID_RUNTIME_CUDA_CUDA_ALLOCATOR_H_
#define BRAID_RUNTIME_CUDA_CUDA_ALLOCATOR_H_

#include <string>

namespace braid {

// Number of usable CUDA devices; 0 (with the reason in *why_none) when there is no device or
// driver.
int CudaDeviceCount(std::string* why_none = nullptr);

}  // namespace braid

#endif  // BRAID_RUNTIME_CUDA_CUDA_ALLOCATOR_H_
