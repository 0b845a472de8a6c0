#include "runtime/core/allocator.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "braid/status.h"
#include "runtime/core/device_context.h"
#include "runtime/device/caching_allocator.h"
#ifdef BRAID_WITH_CUDA
#include "runtime/device/cuda/cuda_device.h"
#endif

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

TEST(AllocatorTest, ACudaDeviceWithoutBackendOrGpuIsAClearError) {
#ifdef BRAID_WITH_CUDA
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a CUDA device is present";
#endif
  try {
    GetAllocator(Device{DeviceType::kCuda, 0});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("cuda:0"), std::string::npos) << e.what();
#ifdef BRAID_WITH_CUDA
    std::string why;
    CudaDeviceCount(&why);
    EXPECT_NE(e.status().message().find(why), std::string::npos) << "the CUDA error: " << e.what();
#else
    EXPECT_NE(e.status().message().find("without the CUDA backend"), std::string::npos) << e.what();
#endif
  }
}

}  // namespace
}  // namespace braid

#ifdef BRAID_WITH_CUDA
// The CUDA device behind the device interface (runtime/device/cuda/cuda_device.h). These run only
// where a GPU is; elsewhere they skip with CUDA's error as the reason.
namespace braid {
namespace {

TEST(CudaDeviceTest, TensorsTakeMemoryFromTheCachingAllocatorOverCudaMalloc) {
  std::string why;
  if (CudaDeviceCount(&why) == 0) GTEST_SKIP() << "needs a CUDA device: " << why;
  const Device gpu{DeviceType::kCuda, 0};
  auto* allocator = CachingAllocatorOf(gpu);
  ASSERT_NE(allocator, nullptr);
  const AllocatorStats before = allocator->stats();
  void* p = allocator->Allocate(3 << 20);
  allocator->Free(p, 3 << 20);
  EXPECT_EQ(allocator->Allocate(3 << 20), p) << "cached";
  allocator->Free(p, 3 << 20);
  EXPECT_EQ(allocator->stats().raw_allocations - before.raw_allocations, 1);
  DeviceMemoryInfo info;
  ASSERT_TRUE(MemoryInfo(gpu, &info).ok());
  EXPECT_GT(info.total_bytes, 0);
  EXPECT_LE(info.free_bytes, info.total_bytes);
}

TEST(CudaDeviceTest, CopiesRoundTripThroughTheDeviceAndEventsOrderStreams) {
  std::string why;
  if (CudaDeviceCount(&why) == 0) GTEST_SKIP() << "needs a CUDA device: " << why;
  DeviceContext* gpu = GetDeviceContext(Device{DeviceType::kCuda, 0});
  std::vector<float> host(1 << 16), back(1 << 16, 0.f);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.5f;
  const size_t bytes = host.size() * sizeof(float);
  void* a = gpu->allocator()->Allocate(bytes);
  void* b = gpu->allocator()->Allocate(bytes);
  gpu->CopyFromHost(a, host.data(), bytes);
  struct CopyTask final : KernelTask {
    DeviceContext* gpu;
    void *dst, *src;
    size_t bytes;
    void Execute() override { gpu->CopyInKernel(dst, gpu->device(), src, gpu->device(), bytes); }
    void Abandon(const Status&) override {}
    std::string Describe() const override { return "copy"; }
  } copy;
  copy.gpu = gpu;
  copy.dst = b;
  copy.src = a;
  copy.bytes = bytes;
  std::unique_ptr<Event> copied = gpu->CreateEvent("copied");
  gpu->stream(1)->Launch(&copy);
  gpu->stream(1)->Record(copied.get());
  gpu->stream(2)->Wait(copied.get());
  copied->HostWait();
  EXPECT_TRUE(copied->Query());
  gpu->CopyToHost(back.data(), b, bytes);
  EXPECT_EQ(back, host);
  gpu->allocator()->Free(a, bytes);
  gpu->allocator()->Free(b, bytes);
}

}  // namespace
}  // namespace braid
#endif  // BRAID_WITH_CUDA
