// The elementwise kernel of the CUDA batch-norm ops (ops/nn/spatial_bn_op.cu and
// spatial_bn_apply_op.cu), over a plain NCHW tensor (or [N, C, spatial...]):
//
//   y = (x - mean[c]) * (inv_std[c] * scale[c]) + bias[c]  (+ residual),  then max(y, 0) if kRelu
//
// where inv_std[c] is given, or computed as 1 / sqrt(variance[c] + epsilon) when `inv_std` is
// null (inference from running statistics). The product inv_std * scale is formed first, as the
// CPU SpatialBNApply does. In place (y == x or y == residual) is safe: each element is read and
// written by one thread. Include from .cu files only.
#ifndef BRAID_OPS_NN_SPATIAL_BN_CUDA_CUH_
#define BRAID_OPS_NN_SPATIAL_BN_CUDA_CUH_

#include <cstdint>

#include "ops/common/cuda_kernel.h"

namespace braid {

struct BnAffineArgs {
  const float* x = nullptr;
  const float* scale = nullptr;
  const float* bias = nullptr;
  const float* mean = nullptr;
  const float* inv_std = nullptr;  // or null: from variance and epsilon
  const float* variance = nullptr;
  float epsilon = 0.f;
  const float* residual = nullptr;               // optional, x's shape
  int64_t channels = 0, spatial = 1, total = 0;  // total: x's element count
  float* y = nullptr;
};

// The channel of element i of an NCHW tensor of `total` elements: in 32 bits where they suffice
// (the same for every thread of a launch), as 64-bit divisions cost several times more on a GPU.
__device__ inline int64_t BnChannelOf(int64_t i, int64_t spatial, int64_t channels, int64_t total) {
  if (total <= 0xFFFFFFFFll) {
    return static_cast<uint32_t>(i) / static_cast<uint32_t>(spatial) %
           static_cast<uint32_t>(channels);
  }
  return (i / spatial) % channels;
}

template <bool kRelu>
__global__ void BnAffineKernel(BnAffineArgs a) {
  BRAID_CUDA_KERNEL_LOOP(i, a.total) {
    const int64_t ch = BnChannelOf(i, a.spatial, a.channels, a.total);
    const float inv_std =
        a.inv_std != nullptr ? a.inv_std[ch] : 1.f / sqrtf(a.variance[ch] + a.epsilon);
    float v = (a.x[i] - a.mean[ch]) * (inv_std * a.scale[ch]) + a.bias[ch];
    if (a.residual != nullptr) v += a.residual[i];
    a.y[i] = kRelu && v < 0.f ? 0.f : v;  // NaN stays NaN, as std::max(v, 0.f) on the CPU
  }
}

// Queues BnAffineKernel on the current stream (nothing for an empty tensor).
inline void LaunchBnAffine(const BnAffineArgs& a, bool relu) {
  if (a.total == 0) return;
  if (relu) {
    BnAffineKernel<true><<<CudaBlocks(a.total), kCudaThreads, 0, CurrentCudaStream()>>>(a);
  } else {
    BnAffineKernel<false><<<CudaBlocks(a.total), kCudaThreads, 0, CurrentCudaStream()>>>(a);
  }
  CheckCudaLaunch("BnAffineKernel");
}

}  // namespace braid

#endif  // BRAID_OPS_NN_SPATIAL_BN_CUDA_CUH_
