#include "runtime/core/device_context.h"

#include <glog/logging.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace braid {

void Stream::RunHere(const std::function<void()>& kernel) {
  CurrentDeviceScope on_device(device());
  kernel();
}

namespace {

thread_local Device tls_current_device;  // cpu:0 unless a CurrentDeviceScope says otherwise
thread_local Stream* tls_allocation_stream = nullptr;
// The backends' context getters (SetDeviceContexts), set while libbraid loads and read after.
std::atomic<DeviceContext* (*)(int)> g_sim_contexts{nullptr};
std::atomic<DeviceContext* (*)(int)> g_cuda_contexts{nullptr};

std::atomic<DeviceContext* (*)(int)>& ContextsOf(DeviceType type) {
  return type == DeviceType::kSim ? g_sim_contexts : g_cuda_contexts;
}

class CpuEvent final : public Event {
 public:
  explicit CpuEvent(std::string label) : label_(std::move(label)) {}
  bool Query() const override { return true; }
  void HostWait() const override {}
  const std::string& label() const override { return label_; }

 private:
  const std::string label_;
};

// cpu work runs where it is launched, so a stream is only a name for the calling thread.
class CpuStream final : public Stream {
 public:
  CpuStream(Device device, int index) : device_(device), index_(index) {}
  const Device& device() const override { return device_; }
  int index() const override { return index_; }
  void Launch(KernelTask* task) override { task->Execute(); }
  void Record(Event*) override {}
  void Wait(Event*, WaitSpan*) override {}
  void Synchronize() override {}

 private:
  const Device device_;
  const int index_;
};

class CpuContext final : public DeviceContext {
 public:
  explicit CpuContext(Device device) : device_(device) {}
  const Device& device() const override { return device_; }
  bool is_async() const override { return false; }
  Stream* stream(int index) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = streams_[index];
    if (!slot) slot = std::make_unique<CpuStream>(device_, index);
    return slot.get();
  }
  std::unique_ptr<Event> CreateEvent(std::string label) override {
    return std::make_unique<CpuEvent>(std::move(label));
  }
  void Synchronize() override {}
  void* RawAllocate(size_t bytes) override { return CpuAllocator()->Allocate(bytes); }
  void RawFree(void* ptr, size_t bytes) override { CpuAllocator()->Free(ptr, bytes); }
  int64_t capacity_bytes() const override { return -1; }  // the host's: not tracked
  int64_t free_bytes() const override { return -1; }
  Allocator* allocator() override { return CpuAllocator(); }
  Device physical_device() const override { return Device{}; }  // the host
  void CopyInKernel(void* dst, const Device&, const void* src, const Device&,
                    size_t bytes) override {
    if (bytes > 0) std::memcpy(dst, src, bytes);
  }
  void CopyToHost(void* host_dst, const void* src, size_t bytes) override {
    if (bytes > 0) std::memcpy(host_dst, src, bytes);
  }
  void CopyFromHost(void* dst, const void* host_src, size_t bytes) override {
    if (bytes > 0) std::memcpy(dst, host_src, bytes);
  }
  std::unique_ptr<Event> MarkApplicationStream(void*) override {
    return std::make_unique<CpuEvent>("the application's writes");
  }

 private:
  const Device device_;
  std::mutex mu_;
  std::map<int, std::unique_ptr<CpuStream>> streams_;  // guarded by mu_
};

}  // namespace

void CopyBetweenDevices(void* dst, const Device& dst_device, const void* src,
                        const Device& src_device, size_t bytes) {
  if (bytes == 0) return;
  if (dst_device.is_host() && src_device.is_host()) {
    std::memcpy(dst, src, bytes);
  } else if (src_device.is_host()) {
    GetDeviceContext(dst_device)->CopyFromHost(dst, src, bytes);
  } else if (dst_device.is_host()) {
    GetDeviceContext(src_device)->CopyToHost(dst, src, bytes);
  } else if (dst_device.type == src_device.type) {  // on the device: peer to peer, or within one
    DeviceContext* to = GetDeviceContext(dst_device);
    if (!(src_device == dst_device)) GetDeviceContext(src_device)->Synchronize();
    to->Synchronize();
    Stream* stream = to->stream(0);
    stream->RunHere([&] { to->CopyInKernel(dst, dst_device, src, src_device, bytes); });
    stream->Synchronize();
  } else {  // between kinds (sim and cuda), through the host
    std::vector<char> bounce(bytes);
    GetDeviceContext(src_device)->CopyToHost(bounce.data(), src, bytes);
    GetDeviceContext(dst_device)->CopyFromHost(dst, bounce.data(), bytes);
  }
}

DeviceContext* GetDeviceContext(const Device& device) {
  switch (device.type) {
    case DeviceType::kCpu: {
      static std::mutex* const mu = new std::mutex();
      static auto* const contexts = new std::map<int, std::unique_ptr<CpuContext>>();
      std::lock_guard<std::mutex> lock(*mu);
      auto& slot = (*contexts)[device.id];
      if (!slot) slot = std::make_unique<CpuContext>(device);
      return slot.get();
    }
    case DeviceType::kSim:
    case DeviceType::kCuda:
      if (auto* get = ContextsOf(device.type).load(std::memory_order_acquire)) {
        return get(device.id);
      }
      break;
  }
  if (device.type == DeviceType::kCuda) {
    throw Error(Status::InvalidArgument(device.ToString() +
                                        ": braid was built without the CUDA backend"));
  }
  // Every build has sim (runtime/device/sim/sim_device.cc registers it while libbraid loads).
  throw Error(Status::Internal(device.ToString() +
                               ": no backend is registered for it (asked for during static "
                               "initialisation, before runtime/device/sim/sim_device.cc registered "
                               "it?)"));
}

Device PhysicalDevice(const Device& device) {
  if (device.is_host()) return Device{};
  return GetDeviceContext(device)->physical_device();
}

bool SharePhysicalDevice(const Device& a, const Device& b) {
  return a == b || PhysicalDevice(a) == PhysicalDevice(b);
}

void SetDeviceContexts(DeviceType type, DeviceContext* (*get)(int id)) {
  // Invariant: the host's contexts are this file's own; only asynchronous backends install theirs.
  CHECK(type == DeviceType::kSim || type == DeviceType::kCuda) << static_cast<int>(type);
  ContextsOf(type).store(get, std::memory_order_release);
}

const Device& CurrentDevice() { return tls_current_device; }

CurrentDeviceScope::CurrentDeviceScope(const Device& device) : previous_(tls_current_device) {
  tls_current_device = device;
}

CurrentDeviceScope::~CurrentDeviceScope() { tls_current_device = previous_; }

Stream* AllocationStream() { return tls_allocation_stream; }

AllocationStreamScope::AllocationStreamScope(Stream* stream) : previous_(tls_allocation_stream) {
  tls_allocation_stream = stream;
}

AllocationStreamScope::~AllocationStreamScope() { tls_allocation_stream = previous_; }

}  // namespace braid
