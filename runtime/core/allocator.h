// Allocators: where tensor storage comes from: one for host memory, one per other device.
//
// Every allocation braid makes goes through an Allocator, and each keeps statistics, so a test can
// snapshot them around a run and assert that it allocated nothing:
//   AllocatorStats before = CpuAllocator()->stats();
//   net->Run();
//   EXPECT_EQ(CpuAllocator()->stats().allocations, before.allocations);
//
// Thread safety: Allocate, Free and stats may be called from any thread at once (counters are
// atomics). Allocators live for the whole process and are never destroyed.
#ifndef BRAID_RUNTIME_CORE_ALLOCATOR_H_
#define BRAID_RUNTIME_CORE_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "braid/status.h"
#include "runtime/core/device.h"

namespace braid {

struct AllocatorStats {
  int64_t bytes_in_use = 0;     // requested bytes currently allocated
  int64_t peak_bytes_in_use = 0;
  int64_t bytes_reserved = 0;   // bytes held from the system (cached ones too), with rounding
  int64_t peak_bytes_reserved = 0;
  int64_t allocations = 0;      // number of Allocate calls
  int64_t frees = 0;            // number of Free calls
  int64_t raw_allocations = 0;  // calls to the system (malloc, a device's RawAllocate)
  int64_t raw_frees = 0;
  int64_t invalid_frees = 0;    // caching allocators: Frees of a pointer or size not live (logged)
  int64_t cached_bytes = 0;        // reserved bytes in no live block (a caching allocator's)
  int64_t largest_free_block = 0;  // the largest of them in one piece

  // 1 - largest free block / cached bytes: 0 when the cache is one piece (or empty).
  double fragmentation() const {
    return cached_bytes > 0 ? 1.0 - static_cast<double>(largest_free_block) / cached_bytes : 0.0;
  }
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory for `bytes` bytes (never null; throws braid::Error when out of memory).
  // Allocate(0) returns a valid unique pointer.
  virtual void* Allocate(size_t bytes) = 0;
  // Frees memory from Allocate; `bytes` must be the size it was allocated with.
  virtual void Free(void* ptr, size_t bytes) = 0;
  virtual AllocatorStats stats() const = 0;
};

// Keeps AllocatorStats for a concrete allocator.
class AllocatorCounters {
 public:
  void OnAllocate(size_t bytes, size_t reserved);
  void OnFree(size_t bytes, size_t reserved);
  AllocatorStats Snapshot() const;

 private:
  std::atomic<int64_t> in_use_{0}, peak_{0}, reserved_{0}, peak_reserved_{0}, allocations_{0},
      frees_{0};
};

// "512 B", "1.50 KiB", "2.00 GiB": bytes for people to read.
std::string HumanBytes(int64_t bytes);

// Host memory, 64-byte aligned (a cache line, and enough for AVX-512 loads).
constexpr size_t kCpuAlignment = 64;
Allocator* CpuAllocator();

// The allocator tensors on `device` take storage from: the host's for cpu devices, the device's
// own (runtime/core/device_context.h) otherwise. Throws braid::Error for a device braid cannot use.
Allocator* GetAllocator(const Device& device);
// Free and total bytes of a device (as MXNet's gpu_memory_info): a device's capacity and what is
// not allocated from it; for cpu devices the host's physical memory and what is available of it.
struct DeviceMemoryInfo {
  int64_t free_bytes = 0;
  int64_t total_bytes = 0;
};
Status MemoryInfo(const Device& device, DeviceMemoryInfo* info);


}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_ALLOCATOR_H_
