#include "runtime/cuda/cuda_allocator.h"

#include <cuda_runtime_api.h>

#include "runtime/allocator.h"
#include "runtime/status.h"

namespace braid {
namespace {

class CudaDeviceAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes) override {
    void* ptr = nullptr;
    cudaError_t err = cudaMalloc(&ptr, bytes == 0 ? 1 : bytes);
    if (err != cudaSuccess) {
      throw Error(Status::Internal("cuda allocator: cudaMalloc of " + std::to_string(bytes) +
                                   " bytes failed: " + cudaGetErrorString(err)));
    }
    counters_.OnAllocate(bytes, bytes);
    return ptr;
  }
  void Free(void* ptr, size_t bytes) override {
    if (ptr == nullptr) return;
    cudaFree(ptr);
    counters_.OnFree(bytes, bytes);
  }
  AllocatorStats stats() const override { return counters_.Snapshot(); }

 private:
  AllocatorCounters counters_;
};

[[maybe_unused]] const bool kRegistered = [] {
  SetCudaAllocator(new CudaDeviceAllocator());  // lives for the process
  return true;
}();

}  // namespace

int CudaDeviceCount(std::string* why_none) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why_none) *why_none = cudaGetErrorString(err);
    return 0;
  }
  if (count == 0 && why_none) *why_none = "no CUDA device present";
  return count;
}

}  // namespace braid
