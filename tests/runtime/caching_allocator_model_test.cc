// CachingAllocatorModel predicts, without a device, the bytes a real CachingAllocator reserves for
// allocations that are never freed.
#include "runtime/device/caching_allocator_model.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "runtime/core/allocator.h"
#include "runtime/core/device.h"
#include "runtime/device/caching_allocator.h"

namespace braid {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(CachingAllocatorModelTest, RoundsLargeRequestsToWholeSegments) {
  CachingAllocatorModel model;
  model.Allocate(3 * kMiB);
  model.Allocate(kMiB + 1);
  EXPECT_EQ(model.reserved_bytes(), 6 * kMiB);
  EXPECT_EQ(model.requested_bytes(), 4 * kMiB + 1);
  EXPECT_EQ(model.large_segments(), 2);
  EXPECT_EQ(model.small_segments(), 0);
}

TEST(CachingAllocatorModelTest, PacksSmallRequestsIntoSharedSegments) {
  CachingAllocatorModel model;
  model.Allocate(1000);       // 1024 B
  model.Allocate(kMiB);       // exactly 1 MiB: still small
  model.Allocate(kMiB - 1024);  // fills the first segment
  EXPECT_EQ(model.small_segments(), 1);
  model.Allocate(1);
  EXPECT_EQ(model.small_segments(), 2);
  EXPECT_EQ(model.reserved_bytes(), 4 * kMiB);
}

TEST(CachingAllocatorModelTest, ReusesTheBestFittingPieceOfAnEarlierSegment) {
  CachingAllocatorModel model;
  model.Allocate(kMiB);            // segment 1: 1 MiB free
  model.Allocate(kMiB + 512 * 1024 - 512);  // large
  model.Allocate(900 * 1024);      // segment 1 again: no new segment
  EXPECT_EQ(model.small_segments(), 1);
}

// The real allocator on a sim device no other test uses, fed the same random sequence.
TEST(CachingAllocatorModelTest, MatchesTheAllocatorsReservedBytesOnSim) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> kind(0, 9);
  std::uniform_int_distribution<int64_t> small(1, kMiB), large(kMiB + 1, 9 * kMiB);
  CachingAllocator* allocator = CachingAllocatorOf(Device{DeviceType::kSim, 61});
  ASSERT_NE(allocator, nullptr);
  const int64_t before = allocator->stats().bytes_reserved;
  CachingAllocatorModel model;
  std::vector<std::pair<void*, int64_t>> live;
  for (int i = 0; i < 300; ++i) {
    const int64_t bytes = kind(rng) == 0 ? large(rng) : small(rng) / (1 + kind(rng) * 40);
    live.emplace_back(allocator->Allocate(static_cast<size_t>(bytes)), bytes);
    model.Allocate(bytes);
    ASSERT_EQ(allocator->stats().bytes_reserved - before, model.reserved_bytes()) << "request " << i;
  }
  for (const auto& [ptr, bytes] : live) allocator->Free(ptr, static_cast<size_t>(bytes));
  allocator->ReleaseCache();
}

}  // namespace
}  // namespace braid
