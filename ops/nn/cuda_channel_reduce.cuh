// Device helpers of the ops/nn CUDA kernels that reduce an NCHW tensor per channel (conv bias
// gradient, batch norm statistics and gradients): one block of kCudaThreads threads per channel,
// each thread summing in double a fixed strided subset of the channel's N * spatial elements in
// order, then a fixed shared-memory tree (the order ops/nn/channel_reduce_order.h states and a CPU
// test checks). No atomics, so a launch computes the same bits on every run; double accumulation,
// so the float result is the exact sum correctly rounded (but within 2^-29 of the terms'
// magnitudes of a rounding boundary), where float partial sums of 10^5 terms (N * H * W of a
// 32x64x56x56 activation) lose several bits.
//
//   struct ValueTerm {
//     const float* x;
//     BRAID_HOST_DEVICE double operator()(int64_t at) const { return x[at]; }
//   };
//   __global__ void ChannelSums(const float* x, int64_t n, int64_t c, int64_t s, float* out) {
//     __shared__ double partial[kCudaThreads];
//     const double total = ChannelSum(ValueTerm{x}, blockIdx.x, n, c, s, partial);
//     if (threadIdx.x == 0) out[blockIdx.x] = static_cast<float>(total);
//   }
//   ChannelSums<<<c, kCudaThreads, 0, CurrentCudaStream()>>>(...);
//
// Include from .cu files only.
#ifndef BRAID_OPS_NN_CUDA_CHANNEL_REDUCE_CUH_
#define BRAID_OPS_NN_CUDA_CHANNEL_REDUCE_CUH_

#include <cstdint>

#include "ops/common/cuda_kernel.h"
#include "ops/nn/channel_reduce_order.h"

namespace braid {

static_assert(kChannelReduceThreads == kCudaThreads, "the order the CPU test checks");

// The sum of `value` over the block (blockDim.x must be kCudaThreads), returned to every thread.
// Every thread of the block must call it; `partial` is kCudaThreads doubles of shared memory,
// reusable once it returns.
__device__ inline double BlockSum(double value, double* partial) {
  static_assert((kCudaThreads & (kCudaThreads - 1)) == 0, "the tree needs a power of two");
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int half = kCudaThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  const double total = partial[0];
  __syncthreads();  // everyone has read partial[0] before it is reused
  return total;
}

// The sum over channel `ch` of term(at) for every element offset `at` of the channel, in double,
// returned to every thread of the block (all must call it).
template <typename Term>
__device__ double ChannelSum(const Term& term, int64_t ch, int64_t n, int64_t c, int64_t s,
                             double* partial) {
  return BlockSum(ChannelThreadSum(term, ch, n, c, s, static_cast<int>(threadIdx.x), kCudaThreads),
                  partial);
}

// A float tensor's elements, as doubles.
struct ValueTerm {
  const float* x;
  BRAID_HOST_DEVICE double operator()(int64_t at) const { return x[at]; }
};

}  // namespace braid

#endif  // BRAID_OPS_NN_CUDA_CHANNEL_REDUCE_CUH_
