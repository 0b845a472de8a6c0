#include "runtime/core/allocator.h"

#include <cstdio>
#include <cstdlib>
#include <new>

#include <unistd.h>

#include "braid/status.h"
#include "runtime/core/device_context.h"

namespace braid {

std::string HumanBytes(int64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f %s", value, kUnits[unit]);
  return text;
}

namespace {

void RaiseTo(std::atomic<int64_t>& peak, int64_t value) {
  int64_t seen = peak.load(std::memory_order_relaxed);
  while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

void AllocatorCounters::OnAllocate(size_t bytes, size_t reserved) {
  allocations_.fetch_add(1, std::memory_order_relaxed);
  int64_t now = in_use_.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed) +
                static_cast<int64_t>(bytes);
  RaiseTo(peak_, now);
  RaiseTo(peak_reserved_, reserved_.fetch_add(static_cast<int64_t>(reserved),
                                              std::memory_order_relaxed) +
                              static_cast<int64_t>(reserved));
}

void AllocatorCounters::OnFree(size_t bytes, size_t reserved) {
  frees_.fetch_add(1, std::memory_order_relaxed);
  reserved_.fetch_sub(static_cast<int64_t>(reserved), std::memory_order_relaxed);
  in_use_.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
}

AllocatorStats AllocatorCounters::Snapshot() const {
  AllocatorStats s;
  s.bytes_in_use = in_use_.load(std::memory_order_relaxed);
  s.peak_bytes_in_use = peak_.load(std::memory_order_relaxed);
  s.bytes_reserved = reserved_.load(std::memory_order_relaxed);
  s.peak_bytes_reserved = peak_reserved_.load(std::memory_order_relaxed);
  s.allocations = allocations_.load(std::memory_order_relaxed);
  s.frees = frees_.load(std::memory_order_relaxed);
  s.raw_allocations = s.allocations;  // each call is one to the system
  s.raw_frees = s.frees;
  return s;
}

namespace {

size_t RoundUp(size_t bytes) { return (bytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment; }

class AlignedCpuAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes) override {
    size_t reserved = RoundUp(bytes == 0 ? 1 : bytes);
    void* ptr = std::aligned_alloc(kCpuAlignment, reserved);
    if (ptr == nullptr) {
      throw Error(Status::Internal("cpu allocator: out of memory allocating " +
                                   std::to_string(bytes) + " bytes"));
    }
    counters_.OnAllocate(bytes, reserved);
    return ptr;
  }
  void Free(void* ptr, size_t bytes) override {
    if (ptr == nullptr) return;
    std::free(ptr);
    counters_.OnFree(bytes, RoundUp(bytes == 0 ? 1 : bytes));
  }
  AllocatorStats stats() const override { return counters_.Snapshot(); }

 private:
  AllocatorCounters counters_;
};

}  // namespace

Allocator* CpuAllocator() {
  static Allocator* const cpu = new AlignedCpuAllocator();  // never destroyed: outlives all tensors
  return cpu;
}

Allocator* GetAllocator(const Device& device) {
  if (device.is_host()) return CpuAllocator();
  return GetDeviceContext(device)->allocator();
}

Status MemoryInfo(const Device& device, DeviceMemoryInfo* info) {
  return StatusFromCall([&] {
    if (device.is_host()) {
      const int64_t page = sysconf(_SC_PAGESIZE);
      info->total_bytes = sysconf(_SC_PHYS_PAGES) * page;
      info->free_bytes = sysconf(_SC_AVPHYS_PAGES) * page;
      return;
    }
    DeviceContext* context = GetDeviceContext(device);
    info->total_bytes = context->capacity_bytes();
    info->free_bytes = context->free_bytes();
  });
}


}  // namespace braid
