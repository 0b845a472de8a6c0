// CachingAllocator: the memory policy of every asynchronous device (sim, and cuda through the same
// code), over the device's raw calls (DeviceContext::RawAllocate, RawFree).
//
// Raw calls are slow and drain the device (cudaMalloc, cudaFree), so freed blocks are cached:
//  - Sizes. A request of at most 1 MiB is rounded up to 512 B and carved from 2 MiB segments (the
//    small pool); a larger one is rounded up to a multiple of 2 MiB and comes from the large pool,
//    so a small block that lives for the whole run never pins a large segment. Best fit within a
//    pool; a larger block is split, and a freed block merges with its free neighbours.
//  - Streams. A block belongs to the stream that allocated it (AllocationStream(), stream 0 when
//    none is set) and only that stream's requests reuse it: a stream runs its work in order, so a
//    block freed on the host while its last kernel is queued can serve the stream's next kernel at
//    once. A block used on another stream must be recorded (RecordStream); when it is freed, an
//    event is recorded on each such stream and the block is reused only once they have completed.
//  - Reserve. reserve_bytes (default 5% of the capacity) are kept free for libraries' own needs:
//    a raw allocation that would leave less free on the device releases the cached free segments
//    first. A raw allocation that fails releases everything cached and is retried once; if it fails
//    again, Allocate throws a ResourceExhausted braid::Error stating the request, the device, its
//    total and free bytes, the bytes this allocator has in use and cached, and its largest cached
//    block. The allocator stays consistent and usable.
//  - Caller mistakes. Free of a pointer that is not live (never given out, or freed and not given
//    out again), or with another size than its Allocate, aborts nothing: the error is logged
//    (naming the device, the pointer and both sizes) and counted in stats().invalid_frees; an
//    unknown pointer is left alone, a live one is freed with the size it was allocated with. A
//    second Free after the block was given out again frees the new owner's block: that cannot be
//    told from a correct Free.
//  - Device lock. Raw calls hold LockDevice(device) (runtime/device/device_lock.h), as collective launches
//    do, so one never falls between the kernel launches of the other.
//
//   CachingAllocator* a = ...;            // SimDevice::allocator(), GetAllocator(sim0)
//   void* p = a->Allocate(3 << 20);       // a 4 MiB segment: one raw allocation
//   a->Free(p, 3 << 20);                  // cached
//   a->Allocate(3 << 20);                 // the same block, no raw call
//
// Thread safety: every method may be called from any thread; one mutex guards the pools and the
// counters. Lock order: this mutex, then the device lock, then the device's own.
#ifndef BRAID_RUNTIME_DEVICE_CACHING_ALLOCATOR_H_
#define BRAID_RUNTIME_DEVICE_CACHING_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "runtime/core/allocator.h"
#include "runtime/core/device_context.h"

namespace braid {

class CachingAllocator final : public Allocator {
 public:
  static constexpr size_t kRoundSmall = 512;
  static constexpr size_t kSmallRequest = size_t{1} << 20;  // at most this: the small pool
  static constexpr size_t kSegment = size_t{2} << 20;       // small segments; large rounding
  static constexpr double kDefaultReserveFraction = 0.05;

  explicit CachingAllocator(DeviceContext* device);
  ~CachingAllocator() override;

  void* Allocate(size_t bytes) override;
  void Free(void* ptr, size_t bytes) override;
  AllocatorStats stats() const override;

  // Marks the block at `ptr` (from Allocate) as used by work queued on `stream` (see above).
  void RecordStream(void* ptr, Stream* stream);
  // Frees the block at `ptr` (from Allocate), for a one-off large scratch block (an algorithm
  // search's workspace) that must not stay cached: when Allocate made a segment for it (no cached
  // block fitted), that segment goes back to the device at once, so the reserved bytes fall back
  // to what they were; a block served from the cache goes back to the cache (the steady state's
  // blocks stay), as does one recorded on other streams. The raw free drains the device, so work
  // queued with the block has finished.
  void FreeAndRelease(void* ptr, size_t bytes);
  // Returns every cached segment with no live block to the device.
  void ReleaseCache();
  // Restarts stats()' peaks from the present bytes in use and reserved, as PyTorch's
  // torch.cuda.reset_peak_memory_stats(): a benchmark's peak over its timed iterations alone.
  void ResetPeakStats();
  // Bytes kept free on the device: `bytes` from now on, or (the default, bytes < 0) 5% of its
  // capacity.
  void set_reserve_bytes(int64_t bytes);
  int64_t reserve_bytes() const;
  // What a new raw allocation can take without eating into the reserve: the device's free bytes
  // beyond it (an algorithm search's workspace limit). Takes no lock, so kernels may call it (a
  // kernel waiting for this allocator's mutex could deadlock with a raw call draining its device).
  int64_t AvailableWithoutReserve() const;
  // The rounded size a request of `bytes` takes.
  static size_t RoundedSize(size_t bytes);

 private:
  struct Block;
  struct BlockOrder {
    bool operator()(const Block* a, const Block* b) const;
  };
  using Pool = std::set<Block*, BlockOrder>;
  struct PendingFree {
    Block* block;
    std::vector<std::unique_ptr<Event>> events;
  };

  Pool& PoolOf(const Block* b);
  Block* BestFit(Pool& pool, int stream, size_t size);
  Block* NewSegment(size_t size, bool small, int stream, size_t request);
  void* RawAllocateWithRetry(size_t size, size_t request);
  Block* Split(Block* b, size_t size);
  // The live block at `ptr`, no longer counted as in use; null (and the mistake logged) for a
  // pointer that is not one.
  Block* TakeAllocated(void* ptr, size_t bytes);
  void FreeBlock(Block* b);
  void ReleaseSegmentLocked(Block* segment);  // a whole free segment, out of its pool
  void ProcessPendingFrees();
  void ReleaseCacheLocked();
  Status OutOfMemory(size_t request, size_t size, const Status& cause) const;
  int64_t LargestFreeLocked() const;
  int64_t CachedBytesLocked() const;  // in the pools (pending blocks are not yet reusable)
  int StreamOfCaller() const;

  DeviceContext* const device_;
  mutable std::mutex mu_;
  Pool small_free_, large_free_;                  // guarded by mu_
  std::unordered_map<void*, Block*> allocated_;   // guarded by mu_: live blocks by address
  std::deque<PendingFree> pending_;               // guarded by mu_: freed, awaiting events
  std::atomic<int64_t> reserve_bytes_;           // < 0: the default fraction of the capacity
  AllocatorStats stats_;                          // guarded by mu_ (cache fields computed)
};

// The caching allocator of `device`, or null for a device whose memory is not cached (cpu).
CachingAllocator* CachingAllocatorOf(const Device& device);

}  // namespace braid

#endif  // BRAID_RUNTIME_DEVICE_CACHING_ALLOCATOR_H_
