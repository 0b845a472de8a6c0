#include "runtime/allocator.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/status.h"

namespace braid {
namespace {

TEST(AllocatorTest, CpuAllocationsAre64ByteAlignedAndCounted) {
  Allocator* cpu = CpuAllocator();
  AllocatorStats before = cpu->stats();
  void* a = cpu->Allocate(10);
  void* b = cpu->Allocate(100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 64, 0u);
  AllocatorStats during = cpu->stats();
  EXPECT_EQ(during.allocations - before.allocations, 2);
  EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, 110);
  EXPECT_GE(during.bytes_reserved - before.bytes_reserved, 128 + 64);
  EXPECT_GE(during.peak_bytes_in_use, during.bytes_in_use);
  cpu->Free(a, 10);
  cpu->Free(b, 100);
  AllocatorStats after = cpu->stats();
  EXPECT_EQ(after.frees - before.frees, 2);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.bytes_reserved, before.bytes_reserved);
}

TEST(AllocatorTest, CountersStayExactUnderConcurrentUse) {
  Allocator* cpu = CpuAllocator();
  AllocatorStats before = cpu->stats();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([cpu] {
      for (int i = 0; i < 1000; ++i) cpu->Free(cpu->Allocate(64), 64);
    });
  }
  for (auto& t : threads) t.join();
  AllocatorStats after = cpu->stats();
  EXPECT_EQ(after.allocations - before.allocations, 4000);
  EXPECT_EQ(after.frees - before.frees, 4000);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
}

TEST(AllocatorTest, DeviceWithoutBackendIsAClearError) {
#ifndef BRAID_WITH_CUDA
  try {
    GetAllocator(Device{DeviceType::kCuda, 0});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("cuda"), std::string::npos);
  }
#else
  EXPECT_NE(GetAllocator(Device{DeviceType::kCuda, 0}), nullptr);
#endif
}

}  // namespace
}  // namespace braid

#ifdef BRAID_WITH_CUDA
#include "runtime/cuda/cuda_allocator.h"

namespace braid {
namespace {

TEST(CudaAllocatorTest, AllocatesAndCountsDeviceMemory) {
  std::string why;
  if (CudaDeviceCount(&why) == 0) GTEST_SKIP() << "needs a CUDA device: " << why;
  Allocator* gpu = GetAllocator(Device{DeviceType::kCuda, 0});
  AllocatorStats before = gpu->stats();
  void* p = gpu->Allocate(1 << 20);
  EXPECT_NE(p, nullptr);
  gpu->Free(p, 1 << 20);
  EXPECT_EQ(gpu->stats().allocations - before.allocations, 1);
  EXPECT_EQ(gpu->stats().bytes_in_use, before.bytes_in_use);
}

TEST(CudaAllocatorTest, WithoutADeviceAllocationFailsWithTheCudaError) {
  std::string why;
  if (CudaDeviceCount(&why) > 0) GTEST_SKIP() << "a CUDA device is present";
  try {
    GetAllocator(Device{DeviceType::kCuda, 0})->Allocate(16);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("cudaMalloc"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace braid
#endif  // BRAID_WITH_CUDA
