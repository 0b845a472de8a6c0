// The public DeviceMemory (include/braid/device_memory.h) over a device's allocator and its copies
// from the host (runtime/core/device_context.h).
#include "braid/device_memory.h"

#include <glog/logging.h>

#include "runtime/core/device.h"
#include "runtime/core/device_context.h"

namespace braid {

Status DeviceMemory::Allocate(const std::string& device, int64_t bytes,
                              std::unique_ptr<DeviceMemory>* memory) {
  if (bytes < 0) {
    return Status::InvalidArgument("device memory on " + device + ": " + std::to_string(bytes) +
                                   " bytes");
  }
  if (memory == nullptr) return Status::InvalidArgument("device memory: no place for it given");
  return StatusFromCall([&] {
    DeviceContext* context = GetDeviceContext(ParseDevice(device));
    void* data = context->allocator()->Allocate(static_cast<size_t>(bytes));
    memory->reset(new DeviceMemory(device, data, bytes));
  });
}

DeviceMemory::~DeviceMemory() {
  // Never throws: a device that fails to drain (a kernel fault) keeps the memory, logged.
  const Status freed = StatusFromCall([&] {
    DeviceContext* context = GetDeviceContext(ParseDevice(device_));
    context->Synchronize();  // braid's work queued before may still use it (as cudaFree waits)
    context->allocator()->Free(data_, static_cast<size_t>(bytes_));
  });
  if (!freed.ok())
    LOG(ERROR) << "device memory on " << device_ << " not freed: " << freed.ToString();
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
