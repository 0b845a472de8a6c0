#include "runtime/device/caching_allocator_model.h"

#include "runtime/device/caching_allocator.h"

namespace braid {

void CachingAllocatorModel::Allocate(int64_t bytes) {
  const int64_t size = static_cast<int64_t>(CachingAllocator::RoundedSize(static_cast<size_t>(bytes)));
  requested_ += bytes;
  if (bytes > static_cast<int64_t>(CachingAllocator::kSmallRequest)) {
    auto fit = large_free_.lower_bound(size);
    if (fit == large_free_.end()) {
      large_reserved_ += size;
      ++large_segments_;
      return;
    }
    const int64_t piece = *fit;
    large_free_.erase(fit);
    cached_ -= piece;
    if (piece - size >= kSegmentBytes) {  // CachingAllocator::Split
      large_free_.insert(piece - size);
      cached_ += piece - size;
    }
    return;
  }
  // Best fit as CachingAllocator::BestFit: the smallest free piece that holds `size`; the rest of
  // it (a multiple of 512 B, since sizes are) stays free.
  int64_t piece = kSegmentBytes;
  auto fit = small_free_.lower_bound(size);
  if (fit != small_free_.end()) {
    piece = *fit;
    small_free_.erase(fit);
  } else {
    ++small_segments_;
  }
  if (piece > size) small_free_.insert(piece - size);
}

}  // namespace braid

namespace braid {

void CachingAllocatorModel::FreeLarge(int64_t bytes) {
  const int64_t size = static_cast<int64_t>(CachingAllocator::RoundedSize(static_cast<size_t>(bytes)));
  requested_ -= bytes;
  large_free_.insert(size);
  cached_ += size;
}

}  // namespace braid
