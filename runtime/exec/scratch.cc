#include "runtime/exec/scratch.h"

#include <algorithm>

#include "braid/status.h"

namespace braid {
namespace {

thread_local ScratchArea* installed_area = nullptr;

}  // namespace

void* ScratchArea::Reserve(size_t bytes) {
  if (bytes > capacity_) {
    constexpr size_t kAlign = 64;
    const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    data_.reset();  // the old contents are not kept: free before allocating
    data_.reset(std::aligned_alloc(kAlign, rounded));
    if (data_ == nullptr) {
      capacity_ = 0;
      throw Error(Status::ResourceExhausted("out of host memory reserving " +
                                            std::to_string(rounded) + " scratch bytes"));
    }
    capacity_ = rounded;
  }
  return data_.get();
}

ScratchArea& ThreadScratch() {
  if (installed_area != nullptr) return *installed_area;
  thread_local ScratchArea own;
  return own;
}

ScratchScope::ScratchScope(ScratchArea* area) : previous_(installed_area) {
  installed_area = area;
}

ScratchScope::~ScratchScope() { installed_area = previous_; }

void ScratchAreas::Equalize() {
  size_t largest = 0;
  for (const ScratchArea& area : areas_) largest = std::max(largest, area.capacity());
  for (ScratchArea& area : areas_) area.Reserve(largest);
}

size_t ScratchAreas::bytes() const {
  size_t total = 0;
  for (const ScratchArea& area : areas_) total += area.capacity();
  return total;
}

}  // namespace braid
