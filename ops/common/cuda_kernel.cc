#include "ops/common/cuda_kernel.h"

#include "ops/common/cublas_library.h"

#include <array>
#include <string>

#include "runtime/device_context.h"
#include "runtime/status.h"

namespace braid {
namespace {

constexpr int kMaxDevices = 64;

Device CurrentCudaDevice() {
  int id = 0;
  cudaGetDevice(&id);
  return Device{DeviceType::kCuda, id};
}

[[noreturn]] void ThrowLibraryError(const char* library, const char* call, const std::string& what) {
  throw Error(Status::Internal(std::string(library) + " " + call + " on " +
                               CurrentCudaDevice().ToString() + ": " + what));
}

}  // namespace

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

cublasHandle_t CublasHandle() {
  thread_local std::array<cublasHandle_t, kMaxDevices> handles{};
  const Device device = CurrentCudaDevice();
  cublasHandle_t& h = handles.at(device.id);
  if (h == nullptr) CheckCublas(Cublas().create(&h), "cublasCreate");
  CheckCublas(Cublas().set_stream(h, CurrentCudaStream()), "cublasSetStream");
  return h;
}

cudnnHandle_t CudnnHandle() {
  thread_local std::array<cudnnHandle_t, kMaxDevices> handles{};
  const Device device = CurrentCudaDevice();
  cudnnHandle_t& h = handles.at(device.id);
  if (h == nullptr) CheckCudnn(cudnnCreate(&h), "cudnnCreate");
  CheckCudnn(cudnnSetStream(h, CurrentCudaStream()), "cudnnSetStream");
  return h;
}

DeviceScratch::DeviceScratch(size_t bytes) : bytes_(bytes) {
  if (bytes_ > 0) ptr_ = GetDeviceContext(CurrentCudaDevice())->allocator()->Allocate(bytes_);
}

DeviceScratch::~DeviceScratch() {
  if (ptr_ != nullptr) GetDeviceContext(CurrentCudaDevice())->allocator()->Free(ptr_, bytes_);
}

}  // namespace braid
