// RawDeviceAllocator: the "no cache" baseline of braid_bench_allocator: an Allocator that makes one
// raw device call per Allocate and per Free (DeviceContext::RawAllocate, RawFree), as a framework
// without a caching allocator would, so each pays what a raw call costs (on sim: the driver lock,
// draining the device, fresh memory filled with 0xFF; on CUDA: cudaMalloc's synchronisation).
//
//   RawDeviceAllocator raw(SimDevice::Get(1));
//   void* p = raw.Allocate(1 << 20);   // one RawAllocate
//   raw.Free(p, 1 << 20);              // one RawFree
//   raw.stats().raw_allocations;       // == allocations
//
// Thread safety: Allocate, Free and stats may be called from any thread (the device's raw calls
// are thread-safe; the counters are atomics). Does not own the device.
#ifndef BRAID_TOOLS_BENCH_RAW_DEVICE_ALLOCATOR_H_
#define BRAID_TOOLS_BENCH_RAW_DEVICE_ALLOCATOR_H_

#include <cstddef>

#include "runtime/core/allocator.h"
#include "runtime/core/device_context.h"

namespace braid::bench {

class RawDeviceAllocator final : public Allocator {
 public:
  explicit RawDeviceAllocator(DeviceContext* device) : device_(device) {}

  void* Allocate(size_t bytes) override;
  void Free(void* ptr, size_t bytes) override;
  // raw_allocations == allocations and raw_frees == frees; reserved == in use (no rounding shown).
  AllocatorStats stats() const override { return counters_.Snapshot(); }

 private:
  DeviceContext* const device_;
  AllocatorCounters counters_;
};

}  // namespace braid::bench

#endif  // BRAID_TOOLS_BENCH_RAW_DEVICE_ALLOCATOR_H_
