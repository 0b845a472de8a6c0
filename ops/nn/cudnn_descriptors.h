// Owning wrappers of cuDNN's legacy descriptors (tensor, filter, convolution, pooling) and the
// setters the ops/nn CUDA kernels use: plain NCHW float32 only, the only layout CUDA tensors have.
//
//   TensorDescriptor x = NchwTensorDescriptor({8, 16, 28, 28});
//   CheckCudnn(cudnnPoolingForward(CudnnHandle(), pool.get(), &one, x.get(), ...), "...");
//
// A descriptor is host memory only (no device, stream or handle), so wrappers may be made and
// destroyed anywhere; one wrapper must not be used by two threads at once. Errors (a dimension that
// does not fit cuDNN's int, a status other than success) throw braid::Error naming the call.
#ifndef BRAID_OPS_NN_CUDNN_DESCRIPTORS_H_
#define BRAID_OPS_NN_CUDNN_DESCRIPTORS_H_

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ops/common/cuda_kernel.h"
#include "ops/nn/conv_pool_window.h"
#include "proto/braid.pb.h"

namespace braid {

template <typename Handle, cudnnStatus_t (*kCreate)(Handle*), cudnnStatus_t (*kDestroy)(Handle)>
class CudnnDescriptor {
 public:
  CudnnDescriptor() { CheckCudnn(kCreate(&handle_), "cudnnCreate*Descriptor"); }
  ~CudnnDescriptor() {
    if (handle_ != nullptr) kDestroy(handle_);
  }
  CudnnDescriptor(CudnnDescriptor&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)) {}
  CudnnDescriptor& operator=(CudnnDescriptor&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;

  Handle get() const { return handle_; }

 private:
  Handle handle_ = nullptr;
};

using TensorDescriptor = CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                                         cudnnDestroyTensorDescriptor>;
using FilterDescriptor = CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                                         cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                    cudnnDestroyConvolutionDescriptor>;
using PoolingDescriptor = CudnnDescriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                                          cudnnDestroyPoolingDescriptor>;

// `value` as cuDNN's int; throws InvalidArgument naming `what` when it does not fit.
int CudnnInt(int64_t value, const std::string& what);

// A float32 NCHW tensor of 4-D `dims`; cuDNN's legacy API also needs the element count below
// 2^31 (checked).
TensorDescriptor NchwTensorDescriptor(const std::vector<int64_t>& dims);
// A float32 filter [K, C, kH, kW] (C: input channels per group).
FilterDescriptor NchwFilterDescriptor(const std::vector<int64_t>& dims);

using Int64Pair = std::array<int64_t, 2>;  // (height, width)

// A float32 cross-correlation (Caffe2's Conv) with symmetric `pad`, `group` groups and
// CUDNN_FMA_MATH: no TF32 tensor-core kernels, so results stay within float32 rounding of the CPU
// kernels'; with CudaTf32Allowed() (ops/common/cuda_kernel.h) CUDNN_DEFAULT_MATH, which allows them
// on SM 80 and later.
ConvolutionDescriptor MakeConvolutionDescriptor(const Int64Pair& pad, const Int64Pair& stride,
                                                const Int64Pair& dilation, int64_t group);

// Throws InvalidArgument naming `def`'s type, the pads and X unless the window pads both sides
// alike, the only padding cuDNN's legacy convolution and pooling descriptors express; `remedy`
// ends the message ("run it on the CPU").
void RequireSymmetricPads(const OperatorDef& def, const ConvPoolWindow& window,
                          const std::vector<int64_t>& x_dims, const std::string& remedy);

// A 2-D pooling of `mode`; NaNs propagate through max pooling, so a diverged input shows.
PoolingDescriptor MakePoolingDescriptor(cudnnPoolingMode_t mode, const Int64Pair& kernel,
                                        const Int64Pair& pad, const Int64Pair& stride);

}  // namespace braid

#endif  // BRAID_OPS_NN_CUDNN_DESCRIPTORS_H_
