// The per-channel reduction order of the CUDA batch-norm and conv-bias kernels
// (ops/nn/channel_reduce_order.h), run on the host: the indexing reaches every element of a
// channel once, stays exact beyond 2^31 elements, and the order in double gives the exact sum of a
// realistic channel (N * H * W = 32 * 56 * 56) correctly rounded to float.
#include "ops/nn/channel_reduce_order.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace braid {
namespace {

TEST(ChannelReduceOrderTest, EveryElementOfAChannelOnceInSampleMajorOrder) {
  const int64_t n = 3, c = 4, s = 5;
  std::set<int64_t> seen;
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t i = 0; i < n * s; ++i) {
      const int64_t at = ChannelElement(i, ch, c, s);
      EXPECT_EQ(at, ((i / s) * c + ch) * s + i % s) << "channel " << ch << " element " << i;
      EXPECT_TRUE(seen.insert(at).second) << at;
    }
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), n * c * s);
}

// A tensor of 3 x 2^20 x 2^12 elements (2^33.6): offsets past 2^31 and 2^32 are exact.
TEST(ChannelReduceOrderTest, OffsetsBeyondTwoToThe31AreExact) {
  const int64_t c = int64_t{1} << 20, s = int64_t{1} << 12;
  EXPECT_EQ(ChannelElement(2 * s + 5, c - 1, c, s), (2 * c + c - 1) * s + 5);
  EXPECT_EQ(ChannelElement(s - 1, c - 1, c, s), c * s - 1);
}

// Each thread's elements are every kChannelReduceThreads-th, starting at its index, so the threads
// cover the channel once between them.
TEST(ChannelReduceOrderTest, ThreadsPartitionTheChannel) {
  const int64_t n = 2, c = 3, s = 700;  // 1400 elements per channel: threads take 5 or 6
  std::vector<int> count(n * c * s, 0);
  struct CountTerm {
    std::vector<int>* count;
    double operator()(int64_t at) const {
      ++(*count)[at];
      return 1.0;
    }
  };
  double total = 0;
  for (int t = 0; t < kChannelReduceThreads; ++t) {
    total += ChannelThreadSum(CountTerm{&count}, 1, n, c, s, t, kChannelReduceThreads);
  }
  EXPECT_EQ(total, static_cast<double>(n * s));
  for (int64_t at = 0; at < n * c * s; ++at) {
    EXPECT_EQ(count[at], (at / s) % c == 1 ? 1 : 0) << at;
  }
}

// The blocks of a channel too large for one (ChannelReduceBlocks) and the steps of a thread whose
// stride spans several samples reach every element of the channel exactly once, in sums of any
// channel shape: tiny, 7x7 maps (strides of several samples), one large sample, many samples.
TEST(ChannelReduceOrderTest, BlocksAndStridesCoverTheChannelOnce) {
  struct CountTerm {
    std::vector<int>* count;
    double operator()(int64_t at) const {
      ++(*count)[at];
      return 1.0;
    }
  };
  const int64_t c = 3;
  for (const auto& [n, s] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {32, 49}, {2, 700}, {1, 100000}, {32, 56 * 56}, {5, 4097}}) {
    std::vector<int> count(n * c * s, 0);
    const double total = ChannelSumOnHost(CountTerm{&count}, 2, n, c, s);
    EXPECT_EQ(total, static_cast<double>(n * s)) << n << "x" << s;
    int64_t wrong = 0;
    for (int64_t at = 0; at < n * c * s; ++at) wrong += count[at] != ((at / s) % c == 2 ? 1 : 0);
    EXPECT_EQ(wrong, 0) << n << "x" << s;
  }
  EXPECT_EQ(ChannelReduceBlocks(0), 1);
  EXPECT_EQ(ChannelReduceBlocks(32 * 49), 1);
  EXPECT_EQ(ChannelReduceBlocks(32 * 56 * 56), 25);  // 100352 / (256 threads * 16)
  EXPECT_EQ(ChannelReduceBlocks(int64_t{1} << 40), kChannelReduceMaxBlocks);
}

// float values that are multiples of 2^-16 in [offset - 2, offset + 2): their exact sum is an
// integer count of 2^-16 (computed in int64), so the test knows the exact result.
struct ExactChannel {
  std::vector<float> values;
  int64_t exact_units = 0;  // the sum, in units of 2^-16
};

ExactChannel RandomChannel(int64_t count, int64_t offset, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> units((offset - 2) << 16, ((offset + 2) << 16) - 1);
  ExactChannel channel;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t u = units(rng);
    channel.values.push_back(static_cast<float>(std::ldexp(static_cast<double>(u), -16)));
    channel.exact_units += u;
  }
  return channel;
}

struct FloatTerm {
  const float* x;
  double operator()(int64_t at) const { return x[at]; }
};

// One channel of a [32, 1, 56, 56] tensor (the N * H * W of a 32x64x56x56 activation): the sum in
// the kernels' order, in double, rounded to float is the exact sum rounded to float. Values near
// 0, and near 100 (a large mean, where float partial sums would lose the low bits).
TEST(ChannelReduceOrderTest, DoubleSumOfARealisticChannelIsTheExactSumRoundedToFloat) {
  const int64_t n = 32, s = 56 * 56;
  for (const int64_t offset : {int64_t{0}, int64_t{100}}) {
    const ExactChannel channel = RandomChannel(n * s, offset, /*seed=*/7 + offset);
    const double ordered = ChannelSumOnHost(FloatTerm{channel.values.data()}, 0, n, 1, s);
    const double exact = std::ldexp(static_cast<double>(channel.exact_units), -16);  // < 2^53
    EXPECT_EQ(static_cast<float>(ordered), static_cast<float>(exact)) << "offset " << offset;
    EXPECT_LE(std::abs(ordered - exact), 1e-9 * (std::abs(offset) + 2) * n * s);
  }
}

}  // namespace
}  // namespace braid
