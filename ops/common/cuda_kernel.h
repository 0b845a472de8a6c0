// What braid's CUDA kernels (ops/**/*_op.cu) share: launch shapes, error checks, scratch memory,
// and the calling thread's cuBLAS, cuDNN and cuRAND handles on the current device, bound to the
// stream the kernel is being queued on (runtime/device/cuda/cuda_device.h CurrentCudaStream).
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
// Device locks (runtime/device/device_lock.h): cublasCreate, cudnnCreate and a cuRAND generator's
// creation allocate device memory, raw calls that must not fall between the kernel launches of a
// collective; each is made holding LockDevice of its device, on first use. Nothing here takes an
// allocator lock while holding a device lock.
//
// Thread safety: handles belong to the calling thread (one per device), because cuBLAS and cuDNN
// handles carry a stream and must not be shared by threads; they live as long as the thread.
// cuBLAS workspaces belong to (device, stream) pairs and live as long as the process.
#ifndef BRAID_OPS_COMMON_CUDA_KERNEL_H_
#define BRAID_OPS_COMMON_CUDA_KERNEL_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <curand.h>

#include <cstddef>
#include <cstdint>

#include "runtime/device/cuda/cuda_device.h"

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

// The device whose kernel the calling thread queues: CurrentDevice(), the logical cuda:N that
// CudaStream::RunHere sets around every CUDA kernel. Outside RunHere, cuda:<CUDA's current GPU>,
// right only where BRAID_CUDA_DEVICES maps ids one to one (runtime/device/device_mapping.h: a
// physical GPU may carry several logical devices); braid's own ops always run inside RunHere.
Device CurrentCudaDevice();

// Throws braid::Error naming `kernel` and the device unless the last launch succeeded.
void CheckCudaLaunch(const char* kernel);
void CheckCublas(cublasStatus_t status, const char* call);
void CheckCudnn(cudnnStatus_t status, const char* call);
void CheckCurand(curandStatus_t status, const char* call);

// Whether float32 convolutions and matrix products may use TF32 tensor cores (SM 80 and later:
// 10 mantissa bits in the products, float32 sums): off unless the environment has
// BRAID_CUDA_TF32=1 when it is first asked (as PyTorch's allow_tf32 flags; off, results stay within
// float32 rounding of the CPU kernels'). Read once; ParseCudaTf32 is the rule ("1", "on", "true":
// on; unset, "0", "off", "false": off; anything else: off, with a warning).
bool CudaTf32Allowed();
bool ParseCudaTf32(const char* value);

// The calling thread's handles for the current CUDA device, set to CurrentCudaStream(). The
// cuBLAS handle is also given that stream's workspace (CublasWorkspaceBytes, allocated once per
// (device, stream) from the device's caching allocator and kept): cublasSetStream drops a
// workspace set before, and without one of its own per stream, cuBLAS would share its default
// pool between the streams one handle moves across.
cublasHandle_t CublasHandle();
cudnnHandle_t CudnnHandle();

// The cuBLAS workspace of a stream on a GPU of compute capability `major`: 32 MiB on Hopper and
// later, 4 MiB before (what NVIDIA recommends for cublasSetWorkspace).
size_t CublasWorkspaceBytes(int major);

// A Philox cuRAND generator on the current device, seeded with `seed`, queueing on
// CurrentCudaStream(), its state set up (curandGenerateSeeds): made and set up holding the
// device's lock. Destroy it with DestroyCurandGenerator on the device it was made on.
curandGenerator_t CreateCurandGenerator(uint64_t seed);
void DestroyCurandGenerator(curandGenerator_t generator, const Device& device);

// Device memory a kernel needs while it runs (cuDNN workspaces, partial sums), from the current
// device's caching allocator on the current stream: freed when it goes out of scope, the block is
// reused only by later work on that stream, so the queued kernels keep it. With
// Release::kToDevice a block that needed a segment of its own gives it back to the device
// (CachingAllocator::FreeAndRelease): for a one-off block as large as an algorithm search's
// workspace, which must not stay cached.
class DeviceScratch {
 public:
  enum class Release { kToCache, kToDevice };
  explicit DeviceScratch(size_t bytes, Release release = Release::kToCache);
  ~DeviceScratch();
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;

  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  Device device_;
  Release release_;
};

}  // namespace braid

#endif  // BRAID_OPS_COMMON_CUDA_KERNEL_H_
