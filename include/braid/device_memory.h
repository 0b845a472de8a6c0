// Memory on a device braid runs on, owned by the application (installed as
// <braid/device_memory.h>): buffers for device tensors (<braid/tensor_view.h>) when the application
// has no allocator of its own for the device, as for the simulated GPU ("sim:N"), whose memory
// only braid makes. On cuda it comes from braid's caching allocator for that GPU (any cudaMalloc'ed
// memory serves device tensors as well).
//
//   std::unique_ptr<braid::DeviceMemory> memory;
//   braid::Status s = braid::DeviceMemory::Allocate("sim:0", 4 * sizeof(float), &memory);
//   const std::vector<float> values = {1.f, 2.f, 3.f, 4.f};
//   if (s.ok()) s = memory->CopyFromHost(values.data(), 4 * sizeof(float));
//   const float* on_device = s.ok() ? memory->as<float>() : nullptr;  // for InputView::OnDevice
//   if (on_device != nullptr) std::cout << "4 floats on " << memory->device() << "\n";
//   std::vector<float> back(4);
//   if (s.ok()) s = memory->CopyToHost(back.data(), 4 * sizeof(float));
//   if (!s.ok()) std::cerr << s.ToString() << "\n";
//
// Copies run from the host after the device has run the work queued on it so far, and return when
// done (as cudaMemcpy). Errors come back as a Status naming the device: InvalidArgument for a
// device braid cannot use or a copy past the end, ResourceExhausted when the device is out of
// memory. Thread safety: Allocate from any thread; one DeviceMemory is the caller's to order (its
// copies must not overlap a call that reads or writes it). Destroying it waits for the device to
// run the work queued on it (as cudaFree does) and frees the memory, which the application's own
// streams must no longer use; a device that fails to drain keeps the memory (logged).
#ifndef BRAID_DEVICE_MEMORY_H_
#define BRAID_DEVICE_MEMORY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "braid/status.h"

namespace braid {

class DeviceMemory {
 public:
  // `bytes` of memory on `device` ("sim:0", "cuda:0"; "cpu:0" gives host memory).
  static Status Allocate(const std::string& device, int64_t bytes,
                         std::unique_ptr<DeviceMemory>* memory);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  int64_t bytes() const { return bytes_; }
  const std::string& device() const { return device_; }

  // Copies `bytes` between host memory and the start of this memory.
  Status CopyFromHost(const void* host, int64_t bytes);
  Status CopyToHost(void* host, int64_t bytes) const;

 private:
  DeviceMemory(std::string device, void* data, int64_t bytes)
      : device_(std::move(device)), data_(data), bytes_(bytes) {}
  Status CheckSize(int64_t bytes, const char* what) const;

  const std::string device_;
  void* const data_;
  const int64_t bytes_;
};

}  // namespace braid

#endif  // BRAID_DEVICE_MEMORY_H_
