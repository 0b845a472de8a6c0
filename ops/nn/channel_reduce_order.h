// The order in which braid's CUDA per-channel reductions (ops/nn/cuda_channel_reduce.cuh: batch
// norm statistics and gradients, the conv bias gradient) add up the N * spatial elements of one
// channel of an NCHW tensor, as functions compiled for the host and the device, so that a CPU test
// checks the indexing and the precision the kernels get
// (tests/ops/nn/channel_reduce_order_test.cc):
//   - thread t of the channel's block (kChannelReduceThreads threads) adds, in double, term(at) for
//     the channel's elements i = t, t + threads, t + 2 threads, ... < N * spatial, `at` being the
//     offset of element i (ChannelElement): ChannelThreadSum;
//   - the block adds the threads' partial sums in a fixed tree, partial[t] += partial[t + h] for
//     h = threads / 2, ..., 1 (BlockSum on the device; ChannelSumOnHost mirrors it).
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

// The offset of the i-th element (i < n * s, sample-major) of channel `ch` in an NCHW tensor with
// `c` channels of `s` elements each, in int64 (no overflow below 2^63 elements).
BRAID_HOST_DEVICE inline int64_t ChannelElement(int64_t i, int64_t ch, int64_t c, int64_t s) {
  const int64_t sample = i / s;
  return (sample * c + ch) * s + (i - sample * s);
}

// Thread `thread`'s partial sum of channel `ch`: term(ChannelElement(i, ...)) for i = thread,
// thread + threads, ... < n * s, in that order. Term returns double (or a struct with + and {}).
template <typename Term>
BRAID_HOST_DEVICE auto ChannelThreadSum(const Term& term, int64_t ch, int64_t n, int64_t c,
                                        int64_t s, int thread, int threads) {
  decltype(term(0)) sum{};
  for (int64_t i = thread; i < n * s; i += threads) sum = sum + term(ChannelElement(i, ch, c, s));
  return sum;
}

// The whole channel's sum as a kernel's block computes it (up to FMA contraction within a
// thread's additions), on the host.
template <typename Term>
double ChannelSumOnHost(const Term& term, int64_t ch, int64_t n, int64_t c, int64_t s) {
  std::vector<double> partial(kChannelReduceThreads);
  for (int t = 0; t < kChannelReduceThreads; ++t) {
    partial[t] = ChannelThreadSum(term, ch, n, c, s, t, kChannelReduceThreads);
  }
  for (int half = kChannelReduceThreads / 2; half > 0; half /= 2) {
    for (int t = 0; t < half; ++t) partial[t] += partial[t + half];
  }
  return partial[0];
}

}  // namespace braid

#endif  // BRAID_OPS_NN_CHANNEL_REDUCE_ORDER_H_
