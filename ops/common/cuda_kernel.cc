#include "ops/common/cuda_kernel.h"

#include <glog/logging.h>

#include <array>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "braid/status.h"
#include "ops/common/cublas_library.h"
#include "ops/common/env_switch.h"
#include "runtime/core/device_context.h"
#include "runtime/device/caching_allocator.h"
#include "runtime/device/device_lock.h"

namespace braid {
namespace {

constexpr int kMaxDevices = 64;

[[noreturn]] void ThrowLibraryError(const char* library, const char* call, const std::string& what) {
  throw Error(Status::Internal(std::string(library) + " " + call + " on " +
                               CurrentCudaDevice().ToString() + ": " + what));
}

struct Workspace {
  void* ptr = nullptr;
  size_t bytes = 0;
};

// The cuBLAS workspace of (device, stream), allocated on first use from the device's caching
// allocator (the launching thread's AllocationStream is `stream`'s, so the block is that stream's)
// and kept for the process: work on one stream runs in order, so every handle queueing on it may
// share it. The mutex is taken before the allocator's, never while holding a device lock.
Workspace CublasWorkspace(const Device& device, cudaStream_t stream) {
  static std::mutex mu;
  static auto* workspaces = new std::map<std::pair<int, cudaStream_t>, Workspace>();
  std::lock_guard<std::mutex> lock(mu);
  Workspace& w = (*workspaces)[{device.id, stream}];
  if (w.ptr == nullptr) {
    int major = 0;
    CheckCuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                     PhysicalDevice(device).id),
              "cudaDeviceGetAttribute", device);
    w.bytes = CublasWorkspaceBytes(major);
    w.ptr = GetDeviceContext(device)->allocator()->Allocate(w.bytes);
  }
  return w;
}

// Per thread and device: the handle and the stream it was last set to.
template <typename Handle>
struct ThreadHandle {
  Handle handle = nullptr;
  cudaStream_t stream = nullptr;
  bool bound = false;  // set to `stream` at least once
};

}  // namespace

Device CurrentCudaDevice() {
  const Device& launching = CurrentDevice();
  if (launching.type == DeviceType::kCuda) return launching;
  // Outside CudaStream::RunHere (a test queueing a kernel itself, an error raised there): CUDA's
  // current GPU, the logical device of that id where BRAID_CUDA_DEVICES maps ids one to one. Not a
  // CHECK: this also names devices in error messages, which must not end the process.
  int physical = 0;
  cudaGetDevice(&physical);
  return Device{DeviceType::kCuda, physical};
}

void CheckCudaLaunch(const char* kernel) {
  CheckCuda(cudaGetLastError(), kernel, CurrentCudaDevice());
}

void CheckCublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) ThrowLibraryError("cuBLAS", call, Cublas().status_string(status));
}

void CheckCudnn(cudnnStatus_t status, const char* call) {
  if (status != CUDNN_STATUS_SUCCESS) ThrowLibraryError("cuDNN", call, cudnnGetErrorString(status));
}

void CheckCurand(curandStatus_t status, const char* call) {
  if (status != CURAND_STATUS_SUCCESS) {
    ThrowLibraryError("cuRAND", call, "status " + std::to_string(static_cast<int>(status)));
  }
}

size_t CublasWorkspaceBytes(int major) { return (major >= 9 ? size_t{32} : size_t{4}) << 20; }

bool ParseCudaTf32(const char* value) { return ParseEnvSwitch("BRAID_CUDA_TF32", value); }

bool CudaTf32Allowed() {
  static const bool allowed = ParseCudaTf32(std::getenv("BRAID_CUDA_TF32"));
  return allowed;
}

cublasHandle_t CublasHandle() {
  const CublasLibrary& cublas = Cublas();  // loaded before any lock is taken
  thread_local std::array<ThreadHandle<cublasHandle_t>, kMaxDevices> handles{};
  const Device device = CurrentCudaDevice();
  ThreadHandle<cublasHandle_t>& h = handles.at(device.id);
  if (h.handle == nullptr) {
    std::unique_lock<std::mutex> raw_call = LockDevice(device);
    CheckCublas(cublas.create(&h.handle), "cublasCreate");
  }
  const cudaStream_t stream = CurrentCudaStream();
  if (!h.bound || h.stream != stream) {
    const Workspace w = CublasWorkspace(device, stream);  // holds no device lock
    CheckCublas(cublas.set_stream(h.handle, stream), "cublasSetStream");
    // After cublasSetStream, which resets the workspace to cuBLAS's default pool.
    CheckCublas(cublas.set_workspace(h.handle, w.ptr, w.bytes), "cublasSetWorkspace");
    h.stream = stream;
    h.bound = true;
  }
  return h.handle;
}

cudnnHandle_t CudnnHandle() {
  thread_local std::array<cudnnHandle_t, kMaxDevices> handles{};
  const Device device = CurrentCudaDevice();
  cudnnHandle_t& h = handles.at(device.id);
  if (h == nullptr) {
    std::unique_lock<std::mutex> raw_call = LockDevice(device);
    CheckCudnn(cudnnCreate(&h), "cudnnCreate");
  }
  CheckCudnn(cudnnSetStream(h, CurrentCudaStream()), "cudnnSetStream");
  return h;
}

curandGenerator_t CreateCurandGenerator(uint64_t seed) {
  const Device device = CurrentCudaDevice();
  std::unique_lock<std::mutex> raw_call = LockDevice(device);
  curandGenerator_t generator = nullptr;
  CheckCurand(curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_PHILOX4_32_10),
              "curandCreateGenerator");
  curandStatus_t status = curandSetPseudoRandomGeneratorSeed(generator, seed);
  if (status == CURAND_STATUS_SUCCESS) status = curandSetStream(generator, CurrentCudaStream());
  if (status == CURAND_STATUS_SUCCESS) status = curandGenerateSeeds(generator);  // its state
  if (status != CURAND_STATUS_SUCCESS) curandDestroyGenerator(generator);
  CheckCurand(status, "setting up a cuRAND generator");
  return generator;
}

void DestroyCurandGenerator(curandGenerator_t generator, const Device& device) {
  if (generator == nullptr) return;
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(PhysicalDevice(device).id);  // a generator is destroyed on the GPU it was made on
  {
    std::unique_lock<std::mutex> raw_call = LockDevice(device);
    curandDestroyGenerator(generator);
  }
  cudaSetDevice(previous);
}

DeviceScratch::DeviceScratch(size_t bytes, Release release)
    : bytes_(bytes), device_(CurrentCudaDevice()), release_(release) {
  if (bytes_ > 0) ptr_ = GetDeviceContext(device_)->allocator()->Allocate(bytes_);
}

DeviceScratch::~DeviceScratch() {
  if (ptr_ == nullptr) return;
  CachingAllocator* caching = CachingAllocatorOf(device_);
  if (release_ == Release::kToDevice && caching != nullptr) {
    try {
      caching->FreeAndRelease(ptr_, bytes_);  // a raw free, which may fail
    } catch (const Error& e) {
      LOG(ERROR) << "releasing " << bytes_ << " bytes of scratch on " << device_.ToString() << ": "
                 << e.status().ToString();
    }
    return;
  }
  GetDeviceContext(device_)->allocator()->Free(ptr_, bytes_);
}

}  // namespace braid
