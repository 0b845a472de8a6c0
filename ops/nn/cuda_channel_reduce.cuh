// Device helpers of the ops/nn CUDA kernels that reduce an NCHW tensor per channel (conv bias
// gradient, batch norm statistics and gradients): one block of kCudaThreads threads per channel,
// each thread summing a fixed strided subset of the channel's N * spatial elements in order, then a
// fixed shared-memory tree. No atomics, so a launch computes the same bits on every run.
//
//   __global__ void ChannelSum(const float* x, int64_t n, int64_t c, int64_t s, float* out) {
//     __shared__ float partial[kCudaThreads];
//     float sum = 0.f;
//     for (int64_t i = threadIdx.x; i < n * s; i += kCudaThreads) {
//       sum += x[ChannelElement(i, blockIdx.x, c, s)];
//     }
//     const float total = BlockSum(sum, partial);
//     if (threadIdx.x == 0) out[blockIdx.x] = total;
//   }
//   ChannelSum<<<c, kCudaThreads, 0, CurrentCudaStream()>>>(...);
//
// Include from .cu files only.
#ifndef BRAID_OPS_NN_CUDA_CHANNEL_REDUCE_CUH_
#define BRAID_OPS_NN_CUDA_CHANNEL_REDUCE_CUH_

#include <cstdint>

#include "ops/common/cuda_kernel.h"

namespace braid {

// The offset of the i-th element (i < n * s, sample-major) of channel `ch` in an NCHW tensor with
// `c` channels of `s` elements each.
__device__ inline int64_t ChannelElement(int64_t i, int64_t ch, int64_t c, int64_t s) {
  const int64_t sample = i / s;
  return (sample * c + ch) * s + (i - sample * s);
}

// The sum of `value` over the block (blockDim.x must be kCudaThreads), returned to every thread.
// Every thread of the block must call it; `partial` is kCudaThreads floats of shared memory,
// reusable once it returns.
__device__ inline float BlockSum(float value, float* partial) {
  static_assert((kCudaThreads & (kCudaThreads - 1)) == 0, "the tree needs a power of two");
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int half = kCudaThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  const float total = partial[0];
  __syncthreads();  // everyone has read partial[0] before it is reused
  return total;
}

}  // namespace braid

#endif  // BRAID_OPS_NN_CUDA_CHANNEL_REDUCE_CUH_
