// What braid's CUDA kernels (ops/**/*_op.cu) share: launch shapes, error checks, scratch memory,
// and the calling thread's cuBLAS, cuDNN and cuRAND handles on the current device, bound to the
// stream the kernel is being queued on (runtime/cuda/cuda_device.h CurrentCudaStream).
//
//   __global__ void ReluKernel(const float* x, float* y, int64_t n) {
//     BRAID_CUDA_KERNEL_LOOP(i, n) y[i] = x[i] < 0.f ? 0.f : x[i];  // NaN stays NaN
//   }
//   void ReluCudaOp::Run() {
//     ...
//     ReluKernel<<<CudaBlocks(n), kCudaThreads, 0, CurrentCudaStream()>>>(x, y, n);
//     CheckCudaLaunch("ReluKernel");
//   }
//
// A CUDA op's Run runs on the launching thread (CudaStream::Launch) and only queues work: it never
// waits for the GPU. Errors throw braid::Error naming the call; the executor adds the net and op.
//
// Thread safety: handles belong to the calling thread (one per device), because cuBLAS and cuDNN
// handles carry a stream and must not be shared by threads; they live as long as the thread.
#ifndef BRAID_OPS_COMMON_CUDA_KERNEL_H_
#define BRAID_OPS_COMMON_CUDA_KERNEL_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <curand.h>

#include <cstddef>
#include <cstdint>

#include "runtime/cuda/cuda_device.h"

namespace braid {

inline constexpr int kCudaThreads = 256;

// Blocks for a grid-stride loop over n elements (at least 1, at most 4096: later ones loop).
inline unsigned int CudaBlocks(int64_t n) {
  const int64_t blocks = (n + kCudaThreads - 1) / kCudaThreads;
  return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > 4096 ? 4096 : blocks));
}

// for (int64_t i = this thread's first element; i < n; i += the grid's threads)
#define BRAID_CUDA_KERNEL_LOOP(i, n)                                                   \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// Throws braid::Error naming `kernel` and the device unless the last launch succeeded.
void CheckCudaLaunch(const char* kernel);
void CheckCublas(cublasStatus_t status, const char* call);
void CheckCudnn(cudnnStatus_t status, const char* call);
void CheckCurand(curandStatus_t status, const char* call);

// The calling thread's handles for the current CUDA device, set to CurrentCudaStream().
cublasHandle_t CublasHandle();
cudnnHandle_t CudnnHandle();

// Device memory a kernel needs while it runs (cuDNN workspaces, partial sums), from the current
// device's caching allocator on the current stream: freed when it goes out of scope, the block is
// reused only by later work on that stream, so the queued kernels keep it.
class DeviceScratch {
 public:
  explicit DeviceScratch(size_t bytes);
  ~DeviceScratch();
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;

  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace braid

#endif  // BRAID_OPS_COMMON_CUDA_KERNEL_H_
