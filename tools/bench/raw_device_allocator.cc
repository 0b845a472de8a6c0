#include "tools/bench/raw_device_allocator.h"

#include "runtime/device/device_lock.h"

namespace braid::bench {

// Raw calls hold the device lock, as the CachingAllocator's do, so both pay the same for them.
void* RawDeviceAllocator::Allocate(size_t bytes) {
  void* ptr = nullptr;
  {
    std::unique_lock<std::mutex> device_lock = LockDevice(device_->device());
    ptr = device_->RawAllocate(bytes == 0 ? 1 : bytes);
  }
  counters_.OnAllocate(bytes, bytes);
  return ptr;
}

void RawDeviceAllocator::Free(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  {
    std::unique_lock<std::mutex> device_lock = LockDevice(device_->device());
    device_->RawFree(ptr, bytes == 0 ? 1 : bytes);
  }
  counters_.OnFree(bytes, bytes);
}

}  // namespace braid::bench
