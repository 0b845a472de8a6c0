#include "runtime/allocator.h"

#include <cstdlib>
#include <new>

#include "runtime/status.h"

namespace braid {

void AllocatorCounters::OnAllocate(size_t bytes, size_t reserved) {
  allocations_.fetch_add(1, std::memory_order_relaxed);
  reserved_.fetch_add(static_cast<int64_t>(reserved), std::memory_order_relaxed);
  int64_t now = in_use_.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed) +
                static_cast<int64_t>(bytes);
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
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
  s.allocations = allocations_.load(std::memory_order_relaxed);
  s.frees = frees_.load(std::memory_order_relaxed);
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

std::atomic<Allocator*> g_allocators[kNumDeviceTypes] = {};

}  // namespace

Allocator* CpuAllocator() {
  static Allocator* const cpu = new AlignedCpuAllocator();  // never destroyed: outlives all tensors
  return cpu;
}

Allocator* GetAllocator(DeviceType type) {
  if (type == DeviceType::kCpu) return CpuAllocator();
  Allocator* a = g_allocators[static_cast<int>(type)].load(std::memory_order_acquire);
  if (a == nullptr) {
    throw Error(Status::InvalidArgument(std::string("no allocator for device type '") +
                                        DeviceTypeName(type) +
                                        "' (braid was built without that backend)"));
  }
  return a;
}

void SetAllocator(DeviceType type, Allocator* allocator) {
  g_allocators[static_cast<int>(type)].store(allocator, std::memory_order_release);
}

}  // namespace braid
