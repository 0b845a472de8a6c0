// CachingAllocatorModel: predicts the bytes a CachingAllocator (runtime/device/caching_allocator.h)
// reserves from its device for a sequence of allocations that live for the run (parameters,
// momenta, arenas: what a planned training net holds), without a device.
//
// It replays the allocator's policy on one stream: each request is rounded with
// CachingAllocator::RoundedSize; requests above kSmallRequest take the best-fitting cached large
// block (split when at least 2 MiB is left over) or else a new segment of their rounded size;
// smaller ones are carved, best fit, from 2 MiB small-pool segments, a new segment opening when no
// remaining piece fits. Only large blocks may be freed (FreeLarge: a shared arena replaced by a
// larger one); they stay cached, reserved, and serve later large requests. Requests must be made
// in the order the program makes them: packing depends on it.
//
//   CachingAllocatorModel model;
//   model.Allocate(4 << 20);   // a large segment of 4 MiB
//   model.Allocate(1000);      // 1024 B in a new 2 MiB small segment
//   model.Allocate(3000);      // 3072 B in the same segment
//   model.reserved_bytes();    // 6 MiB
//
// Thread safety: none (a value type); copy it to branch a prediction.
#ifndef BRAID_RUNTIME_DEVICE_CACHING_ALLOCATOR_MODEL_H_
#define BRAID_RUNTIME_DEVICE_CACHING_ALLOCATOR_MODEL_H_

#include <cstdint>
#include <set>

namespace braid {

class CachingAllocatorModel {
 public:
  // One Allocate(bytes) that lives for the rest of the run.
  void Allocate(int64_t bytes);
  // Frees a block that Allocate(bytes) took, bytes > kSmallRequest, into the cache.
  void FreeLarge(int64_t bytes);

  // The bytes asked for and not freed (AllocatorStats::bytes_in_use).
  int64_t requested_bytes() const { return requested_; }
  // Reserved bytes in free cached blocks.
  int64_t cached_bytes() const { return cached_; }
  // The bytes reserved from the device: large segments plus whole small segments
  // (AllocatorStats::bytes_reserved, and the device's raw bytes in use).
  int64_t reserved_bytes() const { return large_reserved_ + small_segments_ * kSegmentBytes; }
  int64_t small_segments() const { return small_segments_; }
  int64_t large_segments() const { return large_segments_; }

 private:
  static constexpr int64_t kSegmentBytes = int64_t{2} << 20;

  int64_t requested_ = 0;
  int64_t cached_ = 0;
  std::multiset<int64_t> large_free_;  // sizes of the cached large blocks
  int64_t large_reserved_ = 0;
  int64_t large_segments_ = 0;
  int64_t small_segments_ = 0;
  std::multiset<int64_t> small_free_;  // sizes of the free pieces of small segments
};

}  // namespace braid

#endif  // BRAID_RUNTIME_DEVICE_CACHING_ALLOCATOR_MODEL_H_
