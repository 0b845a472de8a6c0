// The public DeviceMemory (include/braid/device_memory.h) over a device's allocator and its copies
// from the host (runtime/core/device_context.h).
#include "braid/device_memory.h"

#include <cstring>

#include "runtime/core/device.h"
#include "runtime/core/device_context.h"

namespace braid {

Status DeviceMemory::Allocate(const std::string& device, int64_t bytes,
                              std::unique_ptr<DeviceMemory>* memory) {
  if (bytes < 0) {
    return Status::InvalidArgument("device memory on " + device + ": " + std::to_string(bytes) +
                                   " bytes");
  }
  return StatusFromCall([&] {
    DeviceContext* context = GetDeviceContext(ParseDevice(device));
    void* data = context->allocator()->Allocate(static_cast<size_t>(bytes));
    memory->reset(new DeviceMemory(device, data, bytes));
  });
}

DeviceMemory::~DeviceMemory() {
  DeviceContext* context = GetDeviceContext(ParseDevice(device_));
  context->Synchronize();  // no work queued before may still use it
  context->allocator()->Free(data_, static_cast<size_t>(bytes_));
}

Status DeviceMemory::CheckSize(int64_t bytes, const char* what) const {
  if (bytes >= 0 && bytes <= bytes_) return Status::OK();
  return Status::InvalidArgument(std::string(what) + " " + std::to_string(bytes) + " bytes of " +
                                 std::to_string(bytes_) + " on " + device_);
}

Status DeviceMemory::CopyFromHost(const void* host, int64_t bytes) {
  const Status size = CheckSize(bytes, "copying from the host");
  if (!size.ok()) return size;
  return StatusFromCall([&] {
    CopyBetweenDevices(data_, ParseDevice(device_), host, Device{}, static_cast<size_t>(bytes));
  });
}

Status DeviceMemory::CopyToHost(void* host, int64_t bytes) const {
  const Status size = CheckSize(bytes, "copying to the host");
  if (!size.ok()) return size;
  return StatusFromCall([&] {
    CopyBetweenDevices(host, Device{}, data_, ParseDevice(device_), static_cast<size_t>(bytes));
  });
}

}  // namespace braid
