// The order in which braid's CUDA per-channel reductions (ops/nn/cuda_channel_reduce.cuh: batch
// norm statistics and gradients, the conv bias gradient) add up the N * spatial elements of one
// channel of an NCHW tensor, as functions compiled for the host and the device, so that a CPU test
// checks the indexing and the precision the kernels get
// (tests/ops/nn/channel_reduce_order_test.cc):
//   - a channel of count = N * spatial elements gets B = ChannelReduceBlocks(count) blocks of
//     kChannelReduceThreads threads (about kChannelReduceElementsPerThread elements per thread, at
//     most kChannelReduceMaxBlocks blocks), so that a few channels of many elements still fill the
//     GPU; thread t of block b is the channel's thread g = b * threads + t of G = B * threads;
//   - thread g adds, in double, term(at) for the channel's elements i = g, g + G, g + 2G, ... <
//     count, `at` being the offset of element i (ChannelElement): ChannelThreadSum, which steps
//     from one element to the next without dividing;
//   - each block adds its threads' partial sums in a fixed tree, partial[t] += partial[t + h] for
//     h = threads / 2, ..., 1 (BlockSum on the device), and the channel's sum is the blocks' sums
//     added in order b = 0, 1, ..., B - 1 (ChannelSumOnHost mirrors all of it).
// No atomics: a launch computes the same bits on every run. In double, a sum of up to 2^24 float
// terms errs by less than 2^-29 of the sum of their magnitudes, so the float result is the exact
// sum correctly rounded except within that distance of a rounding boundary.
//
//   struct ValueTerm {
//     const float* x;
//     BRAID_HOST_DEVICE double operator()(int64_t at) const { return x[at]; }
//   };
//   double sum = ChannelSumOnHost(ValueTerm{x}, /*ch=*/3, n, c, spatial);
//
// Pure functions; thread-safe.
#ifndef BRAID_OPS_NN_CHANNEL_REDUCE_ORDER_H_
#define BRAID_OPS_NN_CHANNEL_REDUCE_ORDER_H_

#include <cstdint>
#include <vector>

#include "ops/common/host_device.h"

namespace braid {

// Threads per channel block (the CUDA kernels' kCudaThreads; a power of two).
inline constexpr int kChannelReduceThreads = 256;
inline constexpr int64_t kChannelReduceElementsPerThread = 16;
inline constexpr int kChannelReduceMaxBlocks = 64;

// Blocks per channel for a channel of `count` elements: 1 to kChannelReduceMaxBlocks.
BRAID_HOST_DEVICE inline int ChannelReduceBlocks(int64_t count) {
  const int64_t per_block = kChannelReduceThreads * kChannelReduceElementsPerThread;
  const int64_t blocks = (count + per_block - 1) / per_block;
  return static_cast<int>(blocks < 1                         ? 1
                          : blocks > kChannelReduceMaxBlocks ? kChannelReduceMaxBlocks
                                                             : blocks);
}

// The offset of the i-th element (i < n * s, sample-major) of channel `ch` in an NCHW tensor with
// `c` channels of `s` elements each, in int64 (no overflow below 2^63 elements).
BRAID_HOST_DEVICE inline int64_t ChannelElement(int64_t i, int64_t ch, int64_t c, int64_t s) {
  const int64_t sample = i / s;
  return (sample * c + ch) * s + (i - sample * s);
}

// Thread `thread`'s partial sum of channel `ch`: term(ChannelElement(i, ...)) for i = thread,
// thread + threads, ... < n * s, in that order. Term returns double (or a struct with + and {}).
// It divides only to start: each step of `threads` = q * s + r elements adds q samples and r
// offsets, carrying one sample when the offset passes s.
template <typename Term>
BRAID_HOST_DEVICE auto ChannelThreadSum(const Term& term, int64_t ch, int64_t n, int64_t c,
                                        int64_t s, int64_t thread, int64_t threads) {
  decltype(term(0)) sum{};
  if (thread >= n * s) return sum;
  const int64_t q = threads / s, r = threads - q * s;
  int64_t sample = thread / s, within = thread - sample * s;
  while (sample < n) {
    sum = sum + term((sample * c + ch) * s + within);
    sample += q;
    within += r;
    if (within >= s) {
      within -= s;
      ++sample;
    }
  }
  return sum;
}

// The whole channel's sum as the kernels compute it (up to FMA contraction within a thread's
// additions), on the host.
template <typename Term>
double ChannelSumOnHost(const Term& term, int64_t ch, int64_t n, int64_t c, int64_t s) {
  const int blocks = ChannelReduceBlocks(n * s);
  const int64_t threads = int64_t{blocks} * kChannelReduceThreads;
  double total = 0;
  std::vector<double> partial(kChannelReduceThreads);
  for (int b = 0; b < blocks; ++b) {
    for (int t = 0; t < kChannelReduceThreads; ++t) {
      partial[t] =
          ChannelThreadSum(term, ch, n, c, s, int64_t{b} * kChannelReduceThreads + t, threads);
    }
    for (int half = kChannelReduceThreads / 2; half > 0; half /= 2) {
      for (int t = 0; t < half; ++t) partial[t] += partial[t + half];
    }
    total += partial[0];
  }
  return total;
}

}  // namespace braid

#endif  // BRAID_OPS_NN_CHANNEL_REDUCE_ORDER_H_
