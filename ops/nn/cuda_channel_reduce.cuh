// Device helpers of the ops/nn CUDA kernels that reduce an NCHW tensor per channel (conv bias
// gradient, batch norm statistics and gradients), in the order ops/nn/channel_reduce_order.h
// states and a CPU test checks: each channel gets ChannelReduceBlocks(N * spatial) blocks of
// kCudaThreads threads, each thread sums in double a fixed strided subset of the channel's
// elements, each block adds its threads' sums in a fixed shared-memory tree and writes the result
// to a partials buffer; a kernel of the op then adds each channel's block sums in block order
// (ChannelTotal) and computes its outputs from them. No atomics, so a launch computes the same
// bits on every run; double accumulation, so the float result is the exact sum correctly rounded
// (but within 2^-29 of the terms' magnitudes of a rounding boundary), where float partial sums of
// 10^5 terms (N * H * W of a 32x64x56x56 activation) lose several bits. Several blocks per
// channel, so that the 64 channels of such an activation still occupy every SM.
//
//   struct ValueTerms {  // the Term of channel ch; may read what earlier kernels wrote
//     const float* x;
//     __device__ ValueTerm operator()(int64_t ch) const { return ValueTerm{x}; }
//   };
//   const int blocks = ChannelReduceBlocks(n * s);
//   DeviceScratch partials(c * blocks * sizeof(double));
//   LaunchChannelBlockSums(ValueTerms{x}, n, c, s, static_cast<double*>(partials.get()),
//                          "ChannelSums");
//   // then, in a kernel: out[ch] = static_cast<float>(ChannelTotal(partials, ch, blocks));
//
// Include from .cu files only.
#ifndef BRAID_OPS_NN_CUDA_CHANNEL_REDUCE_CUH_
#define BRAID_OPS_NN_CUDA_CHANNEL_REDUCE_CUH_

#include <cstdint>
#include <limits>

#include "braid/status.h"
#include "ops/common/cuda_kernel.h"
#include "ops/nn/channel_reduce_order.h"

namespace braid {

static_assert(kChannelReduceThreads == kCudaThreads, "the order the CPU test checks");

// The sum of `value` over the block (blockDim.x must be kCudaThreads), returned to every thread.
// Every thread of the block must call it; `partial` is kCudaThreads values of shared memory,
// reusable once it returns. R: double, or a struct of doubles with + and {}.
template <typename R>
__device__ R BlockSum(R value, R* partial) {
  static_assert((kCudaThreads & (kCudaThreads - 1)) == 0, "the tree needs a power of two");
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int half = kCudaThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      partial[threadIdx.x] = partial[threadIdx.x] + partial[threadIdx.x + half];
    }
    __syncthreads();
  }
  const R total = partial[0];
  __syncthreads();  // everyone has read partial[0] before it is reused
  return total;
}

// Block blockIdx.x is block b = blockIdx.x % blocks of channel ch = blockIdx.x / blocks; it
// writes the sum of make_term(ch)'s terms over its threads' elements to partials[blockIdx.x].
template <typename MakeTerm, typename R>
__global__ void ChannelBlockSumsKernel(MakeTerm make_term, int64_t n, int64_t c, int64_t s,
                                       int blocks, R* partials) {
  __shared__ alignas(16) unsigned char storage[sizeof(R) * kCudaThreads];
  R* partial = reinterpret_cast<R*>(storage);
  const int64_t ch = blockIdx.x / blocks;
  const int64_t b = blockIdx.x % blocks;
  const R mine = ChannelThreadSum(make_term(ch), ch, n, c, s, b * kCudaThreads + threadIdx.x,
                                  int64_t{blocks} * kCudaThreads);
  const R total = BlockSum(mine, partial);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// Queues ChannelBlockSumsKernel on the current stream: c * ChannelReduceBlocks(n * s) partial
// sums into `partials`. Throws braid::Error naming `kernel` when the launch fails or the grid would
// be too large.
template <typename MakeTerm, typename R>
void LaunchChannelBlockSums(const MakeTerm& make_term, int64_t n, int64_t c, int64_t s, R* partials,
                            const char* kernel) {
  const int blocks = ChannelReduceBlocks(n * s);
  const int64_t grid = c * blocks;
  if (grid <= 0) return;
  if (grid > std::numeric_limits<int32_t>::max()) {
    throw Error(Status::InvalidArgument(std::string(kernel) + ": " + std::to_string(c) +
                                        " channels are more than one launch reduces"));
  }
  ChannelBlockSumsKernel<<<static_cast<unsigned int>(grid), kCudaThreads, 0, CurrentCudaStream()>>>(
      make_term, n, c, s, blocks, partials);
  CheckCudaLaunch(kernel);
}

// Channel ch's sum: its `blocks` partial sums added in block order.
template <typename R>
__device__ R ChannelTotal(const R* partials, int64_t ch, int blocks) {
  R total{};
  for (int b = 0; b < blocks; ++b) total = total + partials[ch * blocks + b];
  return total;
}

// A float tensor's elements, as doubles.
struct ValueTerm {
  const float* x;
  BRAID_HOST_DEVICE double operator()(int64_t at) const { return x[at]; }
};

// ValueTerm for every channel.
struct ValueTerms {
  const float* x;
  __device__ ValueTerm operator()(int64_t) const { return ValueTerm{x}; }
};

}  // namespace braid

#endif  // BRAID_OPS_NN_CUDA_CHANNEL_REDUCE_CUH_
