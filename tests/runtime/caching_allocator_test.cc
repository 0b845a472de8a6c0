// CachingAllocator (runtime/device/caching_allocator.h) over sim devices: rounding and pools, best
// fit, splitting and merging, blocks owned by streams and record-stream events, the reserve, one
// retry after releasing the cache, out-of-memory errors, statistics, and MemoryInfo.
//
// Each test makes its own allocator over a sim device no other test in this binary uses, so raw
// call counts are the test's own.
#include "runtime/device/caching_allocator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include "braid/status.h"
#include "runtime/core/workspace.h"
#include "runtime/device/sim/sim_device.h"
#include "runtime/exec/net.h"
#include "testing/net_text.h"

namespace braid {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Tests that check the device's free bytes take one of their own (others may leave blocks live).
SimDevice* TestDevice(int id = 41) { return SimDevice::Get(id); }

// A kernel that blocks its stream until Release().
class BlockingKernel final : public KernelTask {
 public:
  void Execute() override { released_.get_future().wait(); }
  void Abandon(const Status&) override {}
  std::string Describe() const override { return "blocking test kernel"; }
  void Release() { released_.set_value(); }

 private:
  std::promise<void> released_;
};

// Sets the sim devices' capacity while it lives.
class CapacityScope {
 public:
  explicit CapacityScope(int64_t bytes) : saved_(GetSimDeviceOptions()) {
    SimDeviceOptions o = saved_;
    o.capacity_bytes = bytes;
    SetSimDeviceOptions(o);
  }
  ~CapacityScope() { SetSimDeviceOptions(saved_); }

 private:
  const SimDeviceOptions saved_;
};

TEST(CachingAllocatorTest, SmallRequestsAreRoundedTo512BytesAndShareOneSegment) {
  CachingAllocator a(TestDevice());
  std::vector<char*> blocks;
  for (int i = 0; i < 100; ++i) blocks.push_back(static_cast<char*>(a.Allocate(1000)));
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.raw_allocations, 1);
  EXPECT_EQ(s.bytes_reserved, static_cast<int64_t>(CachingAllocator::kSegment));
  EXPECT_EQ(s.bytes_in_use, 100000);
  for (size_t i = 1; i < blocks.size(); ++i) {
    EXPECT_EQ((blocks[i] - blocks[0]) % 1024, 0) << "1000 bytes take two 512-byte granules";
  }
  for (char* p : blocks) a.Free(p, 1000);
  s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.largest_free_block, static_cast<int64_t>(CachingAllocator::kSegment))
      << "freed neighbours merge back into the whole segment";
  EXPECT_EQ(s.fragmentation(), 0.0);
}

TEST(CachingAllocatorTest, LargeRequestsAreRoundedUpToWhole2MiBAndNeverShareSmallSegments) {
  EXPECT_EQ(CachingAllocator::RoundedSize(1), 512u);
  EXPECT_EQ(CachingAllocator::RoundedSize(kMiB), kMiB);
  EXPECT_EQ(CachingAllocator::RoundedSize(kMiB + 1), 2 * kMiB);
  EXPECT_EQ(CachingAllocator::RoundedSize(5 * kMiB), 6 * kMiB);
  CachingAllocator a(TestDevice());
  void* small = a.Allocate(512);  // a small segment, pinned for the test
  void* large = a.Allocate(5 * kMiB);
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.raw_allocations, 2);
  EXPECT_EQ(s.bytes_reserved, static_cast<int64_t>(8 * kMiB));
  a.Free(large, 5 * kMiB);
  a.ReleaseCache();  // the large segment goes back although a small block lives
  EXPECT_EQ(a.stats().bytes_reserved, static_cast<int64_t>(2 * kMiB));
  a.Free(small, 512);
}

TEST(CachingAllocatorTest, FreedBlocksAreReusedByBestFitWithoutRawCalls) {
  CachingAllocator a(TestDevice());
  void* eight = a.Allocate(8 * kMiB);
  void* four = a.Allocate(4 * kMiB);
  a.Free(eight, 8 * kMiB);
  a.Free(four, 4 * kMiB);
  const int64_t raw = a.stats().raw_allocations;
  EXPECT_EQ(a.Allocate(3 * kMiB), four) << "the smallest cached block that fits";
  EXPECT_EQ(a.Allocate(7 * kMiB), eight);
  EXPECT_EQ(a.stats().raw_allocations, raw);
  a.Free(four, 3 * kMiB);
  a.Free(eight, 7 * kMiB);
}

// Used to CHECK-abort the process.
TEST(CachingAllocatorTest, AFreeOfAForeignPointerOrWithAnotherSizeIsCountedAndAbortsNothing) {
  CachingAllocator a(TestDevice());
  void* p = a.Allocate(3 * kMiB);
  int foreign = 0;
  a.Free(&foreign, 16);  // never given out: left alone
  EXPECT_EQ(a.stats().invalid_frees, 1);
  EXPECT_EQ(a.stats().bytes_in_use, static_cast<int64_t>(3 * kMiB));
  a.Free(p, 5 * kMiB);  // another size: freed with its own
  EXPECT_EQ(a.stats().invalid_frees, 2);
  EXPECT_EQ(a.stats().bytes_in_use, 0);
  a.Free(p, 3 * kMiB);  // twice, before the block is given out again: left alone
  EXPECT_EQ(a.stats().invalid_frees, 3);
  const int64_t raw = a.stats().raw_allocations;
  void* again = a.Allocate(3 * kMiB);  // the allocator goes on: the cached block serves
  EXPECT_EQ(again, p);
  EXPECT_EQ(a.stats().raw_allocations, raw);
  a.Free(again, 3 * kMiB);
  EXPECT_EQ(a.stats().invalid_frees, 3);
}

TEST(CachingAllocatorTest, ALargerBlockIsSplitAndItsPiecesMergeWhenFreed) {
  CachingAllocator a(TestDevice());
  char* base = static_cast<char*>(a.Allocate(10 * kMiB));
  a.Free(base, 10 * kMiB);
  void* first = a.Allocate(4 * kMiB);
  void* second = a.Allocate(6 * kMiB);
  EXPECT_EQ(first, base);
  EXPECT_EQ(second, base + 4 * kMiB);
  EXPECT_EQ(a.stats().raw_allocations, 1);
  a.Free(second, 6 * kMiB);
  a.Free(first, 4 * kMiB);
  EXPECT_EQ(a.stats().largest_free_block, static_cast<int64_t>(10 * kMiB));
  EXPECT_EQ(a.Allocate(10 * kMiB), base);
  a.Free(base, 10 * kMiB);
}

// An algorithm search's workspace (ops/nn/cudnn_conv_search.cc) is freed this way: its segment
// goes back to the device, so the reserved bytes fall back to what they were before it.
TEST(CachingAllocatorTest, FreeAndReleaseReturnsAOneOffBlocksSegmentToTheDevice) {
  CachingAllocator a(TestDevice(47));
  void* kept = a.Allocate(4 * kMiB);
  const int64_t reserved = a.stats().bytes_reserved;
  const int64_t free_before = TestDevice(47)->free_bytes();
  void* scratch = a.Allocate(64 * kMiB);
  EXPECT_EQ(a.stats().bytes_reserved, reserved + static_cast<int64_t>(64 * kMiB));
  a.FreeAndRelease(scratch, 64 * kMiB);
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.bytes_reserved, reserved);
  EXPECT_EQ(s.cached_bytes, 0);
  EXPECT_EQ(s.raw_frees, 1);
  EXPECT_EQ(s.bytes_in_use, static_cast<int64_t>(4 * kMiB));
  EXPECT_EQ(TestDevice(47)->free_bytes(), free_before);
  a.Free(kept, 4 * kMiB);  // plain Free caches
  EXPECT_EQ(a.stats().bytes_reserved, reserved);
  EXPECT_EQ(a.stats().raw_frees, 1);
}

TEST(CachingAllocatorTest, ResetPeakStatsRestartsThePeaksFromThePresentBytes) {
  CachingAllocator a(TestDevice());
  void* kept = a.Allocate(4 * kMiB);
  a.FreeAndRelease(a.Allocate(64 * kMiB), 64 * kMiB);  // a search's workspace, gone again
  EXPECT_EQ(a.stats().peak_bytes_reserved, static_cast<int64_t>(68 * kMiB));
  a.ResetPeakStats();
  EXPECT_EQ(a.stats().peak_bytes_in_use, static_cast<int64_t>(4 * kMiB));
  EXPECT_EQ(a.stats().peak_bytes_reserved, static_cast<int64_t>(4 * kMiB));
  a.Free(a.Allocate(6 * kMiB), 6 * kMiB);
  EXPECT_EQ(a.stats().peak_bytes_in_use, static_cast<int64_t>(10 * kMiB));
  EXPECT_EQ(a.stats().peak_bytes_reserved, static_cast<int64_t>(10 * kMiB));
  a.Free(kept, 4 * kMiB);
}

// A block served from the cache goes back to the cache: FreeAndRelease never takes from the
// device what was cached before (the blocks a net reuses every iteration stay), nor a segment
// another block shares.
TEST(CachingAllocatorTest, FreeAndReleaseReturnsABlockServedFromTheCacheToTheCache) {
  CachingAllocator a(TestDevice());
  char* base = static_cast<char*>(a.Allocate(10 * kMiB));
  a.Free(base, 10 * kMiB);
  void* first = a.Allocate(4 * kMiB);
  void* second = a.Allocate(6 * kMiB);
  a.FreeAndRelease(second, 6 * kMiB);
  a.FreeAndRelease(first, 4 * kMiB);
  AllocatorStats s = a.stats();
  EXPECT_EQ(s.bytes_reserved, static_cast<int64_t>(10 * kMiB));
  EXPECT_EQ(s.cached_bytes, static_cast<int64_t>(10 * kMiB));
  EXPECT_EQ(s.raw_frees, 0);
  EXPECT_EQ(a.Allocate(10 * kMiB), base) << "the pieces merged back into the cached segment";
  a.Free(base, 10 * kMiB);
  void* small = a.Allocate(4096);  // its own new 2 MiB segment, which it does not span
  a.FreeAndRelease(small, 4096);
  EXPECT_EQ(a.stats().raw_frees, 0);
}

TEST(CachingAllocatorTest, ABlockServesOnlyTheStreamThatAllocatedIt) {
  CachingAllocator a(TestDevice());
  Stream* one = TestDevice()->stream(1);
  void* on_one;
  {
    AllocationStreamScope scope(one);
    on_one = a.Allocate(4 * kMiB);
    a.Free(on_one, 4 * kMiB);
  }
  void* on_zero = a.Allocate(4 * kMiB);
  EXPECT_NE(on_zero, on_one);
  EXPECT_EQ(a.stats().raw_allocations, 2);
  a.Free(on_zero, 4 * kMiB);
  AllocationStreamScope scope(one);
  EXPECT_EQ(a.Allocate(4 * kMiB), on_one);
  a.Free(on_one, 4 * kMiB);
}

TEST(CachingAllocatorTest, ABlockRecordedOnAnotherStreamWaitsForThatStreamBeforeReuse) {
  CachingAllocator a(TestDevice());
  Stream* other = TestDevice()->stream(2);
  void* block = a.Allocate(4 * kMiB);
  void* spare = a.Allocate(4 * kMiB);
  a.Free(spare, 4 * kMiB);  // cached: the next request needs no raw call (which would drain)
  BlockingKernel reader;    // stands for a kernel on stream 2 still reading the block
  other->Launch(&reader);
  a.RecordStream(block, other);
  a.Free(block, 4 * kMiB);
  EXPECT_EQ(a.Allocate(4 * kMiB), spare) << "not the block stream 2 may still read";
  EXPECT_EQ(a.stats().cached_bytes, 0) << "the pending block is not reusable yet";
  reader.Release();
  other->Synchronize();
  EXPECT_EQ(a.Allocate(4 * kMiB), block);
  a.Free(block, 4 * kMiB);
  a.Free(spare, 4 * kMiB);
}

TEST(CachingAllocatorTest, ARawAllocationThatWouldEatIntoTheReserveReleasesTheCacheFirst) {
  CapacityScope capacity(64 * kMiB);
  CachingAllocator a(TestDevice(44));
  EXPECT_EQ(a.reserve_bytes(), static_cast<int64_t>(64 * kMiB / 20)) << "5% by default";
  a.set_reserve_bytes(16 * kMiB);
  a.Free(a.Allocate(20 * kMiB), 20 * kMiB);
  EXPECT_EQ(a.stats().cached_bytes, static_cast<int64_t>(20 * kMiB));
  EXPECT_EQ(a.AvailableWithoutReserve(), static_cast<int64_t>(28 * kMiB));
  AllocationStreamScope scope(TestDevice(44)->stream(1));  // not served by stream 0's cache
  void* p = a.Allocate(30 * kMiB);  // 44 MiB free - 30 would leave 14 < 16
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.raw_frees, 1);
  EXPECT_EQ(s.cached_bytes, 0);
  EXPECT_EQ(s.bytes_reserved, static_cast<int64_t>(30 * kMiB));
  a.Free(p, 30 * kMiB);
}

TEST(CachingAllocatorTest, AFailedRawAllocationReleasesTheCacheAndRetriesOnce) {
  CapacityScope capacity(64 * kMiB);
  CachingAllocator a(TestDevice(45));
  a.set_reserve_bytes(0);
  a.Free(a.Allocate(40 * kMiB), 40 * kMiB);  // cached for stream 0
  AllocationStreamScope scope(TestDevice(45)->stream(1));
  void* p = a.Allocate(40 * kMiB);  // 24 MiB free: fails, releases the 40 cached, succeeds
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.raw_allocations, 2);
  EXPECT_EQ(s.raw_frees, 1);
  EXPECT_EQ(s.peak_bytes_reserved, static_cast<int64_t>(40 * kMiB));
  a.Free(p, 40 * kMiB);
}

TEST(CachingAllocatorTest, OutOfMemoryIsAStatusStatingTheRequestAndTheDeviceAndTheAllocatorGoesOn) {
  CapacityScope capacity(64 * kMiB);
  CachingAllocator a(TestDevice(46));
  void* held = a.Allocate(8 * kMiB);
  a.Free(a.Allocate(1000), 1000);  // a cached small segment
  EXPECT_EQ(a.stats().largest_free_block, static_cast<int64_t>(2 * kMiB));
  try {
    a.Allocate(100 * kMiB);
    FAIL() << "100 MiB fit into 64";
  } catch (const Error& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kResourceExhausted);
    const std::string& m = e.status().message();
    // The message describes the allocator after its retry released the cached small segment.
    for (const char* part : {"sim:46", "104857600 bytes", "64.00 MiB in total", "56.00 MiB free",
                             "8.00 MiB in use", "0 B cached", "largest free block 0 B"}) {
      EXPECT_NE(m.find(part), std::string::npos) << part << " missing from: " << m;
    }
  }
  void* after = a.Allocate(16 * kMiB);
  EXPECT_NE(after, nullptr);
  a.Free(after, 16 * kMiB);
  a.Free(held, 8 * kMiB);
  EXPECT_EQ(a.stats().bytes_in_use, 0);
}

TEST(CachingAllocatorTest, OutOfMemoryInANetNamesTheNetOpBlobAndDeviceAndTheWorkspaceGoesOn) {
  NetDef def = testing::NetFromText(R"(name: "big" device_option { device_type: 1000 device_id: 47 }
    op { type: "GaussianFill" name: "fill" output: "x" arg { name: "shape" ints: 4096 ints: 4096 }
    })");
  Workspace ws;
  Net* net = ws.CreateNet(def);
  Status s;
  {
    CapacityScope capacity(32 * kMiB);  // x takes 64 MiB
    s = net->Run();
  }
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  for (const char* part : {"net 'big'", "op #0 (GaussianFill 'fill')", "output 'x'", "sim:47",
                           "67108864 bytes", "32.00 MiB in total"}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " missing from: " << s.message();
  }
  EXPECT_TRUE(net->Run().ok()) << "with room again, the same workspace runs";
}

TEST(CachingAllocatorTest, ConcurrentUseNeverHandsOutOverlappingBlocksAndCountsStayExact) {
  CachingAllocator a(TestDevice());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&a, t] {
      std::mt19937 rng(t);
      std::vector<std::pair<unsigned char*, size_t>> live;
      for (int i = 0; i < 2000; ++i) {
        if (!live.empty() && rng() % 2 == 0) {
          auto [p, n] = live.back();
          live.pop_back();
          for (size_t k = 0; k < n; k += 97) ASSERT_EQ(p[k], static_cast<unsigned char>(t));
          a.Free(p, n);
          continue;
        }
        const size_t n = rng() % 4 == 0 ? 1 + rng() % (3 * kMiB) : 1 + rng() % 8192;
        auto* p = static_cast<unsigned char*>(a.Allocate(n));
        std::memset(p, t, n);
        live.push_back({p, n});
      }
      for (auto [p, n] : live) a.Free(p, n);
    });
  }
  for (std::thread& t : threads) t.join();
  const AllocatorStats s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.allocations, s.frees);
  EXPECT_EQ(s.cached_bytes, s.bytes_reserved);
}

TEST(CachingAllocatorTest, SimTensorsTakeTheirMemoryFromTheDevicesCachingAllocator) {
  const Device sim{DeviceType::kSim, 42};
  CachingAllocator* a = CachingAllocatorOf(sim);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(GetAllocator(sim), a);
  EXPECT_EQ(CachingAllocatorOf(Device{}), nullptr) << "host memory is not cached";
}

TEST(CachingAllocatorTest, MemoryInfoGivesFreeAndTotalBytes) {
  const Device sim{DeviceType::kSim, 43};
  DeviceMemoryInfo before;
  ASSERT_TRUE(MemoryInfo(sim, &before).ok());
  EXPECT_EQ(before.total_bytes, GetSimDeviceOptions().capacity_bytes);
  void* p = GetAllocator(sim)->Allocate(3 * kMiB);
  DeviceMemoryInfo during;
  ASSERT_TRUE(MemoryInfo(sim, &during).ok());
  EXPECT_EQ(before.free_bytes - during.free_bytes, static_cast<int64_t>(4 * kMiB));
  GetAllocator(sim)->Free(p, 3 * kMiB);
  DeviceMemoryInfo host;
  ASSERT_TRUE(MemoryInfo(Device{}, &host).ok());
  EXPECT_GT(host.total_bytes, 0);
  EXPECT_GT(host.free_bytes, 0);
  EXPECT_LE(host.free_bytes, host.total_bytes);
  DeviceMemoryInfo none;
  EXPECT_FALSE(MemoryInfo(Device{DeviceType::kSim, 9999}, &none).ok());
}

}  // namespace
}  // namespace braid
