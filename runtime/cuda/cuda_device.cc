#include "runtime/cuda/cuda_device.h"

#include <glog/logging.h>

#include <array>
#include <atomic>

#include "runtime/caching_allocator.h"
#include "runtime/status.h"
#include "runtime/tensor.h"

namespace braid {
namespace {

constexpr int kMaxDevices = 64;
thread_local cudaStream_t tls_stream = nullptr;

// Makes `id` the calling thread's CUDA device while it lives.
class DeviceGuard {
 public:
  explicit DeviceGuard(const Device& device) : device_(device) {
    CheckCuda(cudaGetDevice(&previous_), "cudaGetDevice", device);
    if (previous_ != device.id) CheckCuda(cudaSetDevice(device.id), "cudaSetDevice", device);
  }
  ~DeviceGuard() {
    if (previous_ != device_.id) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  const Device device_;
  int previous_ = 0;
};

// Lets kernels and copies on cuda:`from` reach cuda:`to`'s memory directly (NVLink or PCIe peer
// to peer) where the hardware allows; elsewhere copies go through the host (cudaMemcpyPeerAsync).
void EnablePeerAccess(int from, int to) {
  const Device device{DeviceType::kCuda, from};
  int can = 0;
  CheckCuda(cudaDeviceCanAccessPeer(&can, from, to), "cudaDeviceCanAccessPeer", device);
  if (can == 0) return;
  DeviceGuard guard(device);
  const cudaError_t err = cudaDeviceEnablePeerAccess(to, 0);
  if (err == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();
    return;
  }
  CheckCuda(err, "cudaDeviceEnablePeerAccess", device);
}

class CudaEvent final : public Event {
 public:
  CudaEvent(const Device& device, std::string label) : device_(device), label_(std::move(label)) {
    DeviceGuard guard(device_);
    CheckCuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate",
              device_);
  }
  ~CudaEvent() override { cudaEventDestroy(event_); }
  bool Query() const override {
    const cudaError_t err = cudaEventQuery(event_);
    if (err == cudaErrorNotReady) return false;
    CheckCuda(err, "cudaEventQuery", device_);
    return true;
  }
  void HostWait() const override {
    CheckCuda(cudaEventSynchronize(event_), "cudaEventSynchronize", device_);
  }
  const std::string& label() const override { return label_; }
  cudaEvent_t get() const { return event_; }

 private:
  const Device device_;
  const std::string label_;
  cudaEvent_t event_ = nullptr;
};

}  // namespace

class CudaStream final : public Stream {
 public:
  CudaStream(const Device& device, int index) : device_(device), index_(index) {
    DeviceGuard guard(device_);
    CheckCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate",
              device_);
  }
  const Device& device() const override { return device_; }
  int index() const override { return index_; }
  void Launch(KernelTask* task) override {
    FixedTensorsScope fixed;  // as on a sim stream: the launcher fixed the kernel's tensors
    RunHere([task] { task->Execute(); });  // queues its kernels; reports its own failures
  }
  void RunHere(const std::function<void()>& kernel) override {
    DeviceGuard guard(device_);
    CurrentDeviceScope on_device(device_);
    AllocationStreamScope allocating_for(this);  // scratch blocks belong to this stream
    const cudaStream_t previous = tls_stream;
    tls_stream = stream_;
    struct Restore {
      cudaStream_t previous;
      ~Restore() { tls_stream = previous; }
    } restore{previous};
    kernel();
  }
  void Record(Event* event) override {
    DeviceGuard guard(device_);  // the event was made on device_: record it with device_ current
    CheckCuda(cudaEventRecord(static_cast<CudaEvent*>(event)->get(), stream_), "cudaEventRecord",
              device_);
  }
  void Wait(Event* event, WaitSpan*) override {
    CheckCuda(cudaStreamWaitEvent(stream_, static_cast<CudaEvent*>(event)->get(), 0),
              "cudaStreamWaitEvent", device_);
  }
  void Synchronize() override {
    CheckCuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize", device_);
  }

 private:
  const Device device_;
  const int index_;
  cudaStream_t stream_ = nullptr;  // destroyed never: devices live for the process
};

int CudaDeviceCount(std::string* why_none) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear it
    if (why_none != nullptr) *why_none = cudaGetErrorString(err);
    return 0;
  }
  if (count == 0 && why_none != nullptr) *why_none = "no CUDA device present";
  return count;
}

cudaStream_t CurrentCudaStream() { return tls_stream; }

void CheckCuda(cudaError_t err, const char* call, const Device& device) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // a failed call leaves its error behind; later calls must not see it
  const std::string message =
      std::string(call) + " on " + device.ToString() + ": " + cudaGetErrorString(err);
  if (err == cudaErrorMemoryAllocation) throw Error(Status::ResourceExhausted(message));
  throw Error(Status::Internal(message));
}

CudaDevice* CudaDevice::Get(int id) {
  static auto* const devices = new std::array<std::atomic<CudaDevice*>, kMaxDevices>();
  static auto* const make_mu = new std::mutex();
  const Device device{DeviceType::kCuda, id};
  std::string why;
  const int count = CudaDeviceCount(&why);
  if (id < 0 || id >= count || id >= kMaxDevices) {
    throw Error(Status::InvalidArgument(
        device.ToString() + " does not exist: " +
        (count == 0 ? why : "this machine has " + std::to_string(count) + " CUDA device(s)")));
  }
  std::atomic<CudaDevice*>& slot = (*devices)[id];
  if (CudaDevice* made = slot.load(std::memory_order_acquire)) return made;
  std::lock_guard<std::mutex> lock(*make_mu);
  if (slot.load(std::memory_order_acquire) == nullptr) {
    for (int peer = 0; peer < count && peer < kMaxDevices; ++peer) {
      if (peer != id && (*devices)[peer].load(std::memory_order_acquire) != nullptr) {
        EnablePeerAccess(id, peer);
        EnablePeerAccess(peer, id);
      }
    }
    slot.store(new CudaDevice(id));
  }
  return slot.load(std::memory_order_acquire);
}

CudaDevice::CudaDevice(int id)
    : device_{DeviceType::kCuda, id},
      allocator_(std::make_unique<CachingAllocator>(this)),
      pinned_(device_) {}

Stream* CudaDevice::stream(int index) {
  CHECK(index >= 0 && index < kMaxStreams)
      << device_.ToString() << " has streams 0 to " << kMaxStreams - 1 << ", not " << index;
  std::lock_guard<std::mutex> lock(streams_mu_);
  while (static_cast<int>(streams_.size()) <= index) {
    streams_.push_back(std::make_unique<CudaStream>(device_, static_cast<int>(streams_.size())));
  }
  return streams_[index].get();
}

std::unique_ptr<Event> CudaDevice::CreateEvent(std::string label) {
  return std::make_unique<CudaEvent>(device_, std::move(label));
}

void CudaDevice::Synchronize() {
  DeviceGuard guard(device_);
  CheckCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device_);
}

void* CudaDevice::RawAllocate(size_t bytes) {
  DeviceGuard guard(device_);
  void* ptr = nullptr;
  CheckCuda(cudaMalloc(&ptr, bytes == 0 ? 1 : bytes), "cudaMalloc", device_);
  return ptr;
}

void CudaDevice::RawFree(void* ptr, size_t) {
  if (ptr == nullptr) return;
  DeviceGuard guard(device_);
  CheckCuda(cudaFree(ptr), "cudaFree", device_);
}

int64_t CudaDevice::capacity_bytes() const {
  DeviceGuard guard(device_);
  size_t free = 0, total = 0;
  CheckCuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo", device_);
  return static_cast<int64_t>(total);
}

int64_t CudaDevice::free_bytes() const {
  DeviceGuard guard(device_);
  size_t free = 0, total = 0;
  CheckCuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo", device_);
  return static_cast<int64_t>(free);
}

void CudaDevice::CopyInKernel(void* dst, const Device& dst_device, const void* src,
                              const Device& src_device,
                              size_t bytes) {
  if (bytes == 0) return;
  if (dst_device.type == DeviceType::kCuda && src_device.type == DeviceType::kCuda &&
      dst_device.id != src_device.id) {
    CheckCuda(cudaMemcpyPeerAsync(dst, dst_device.id, src, src_device.id, bytes,
                                  CurrentCudaStream()),
              "cudaMemcpyPeerAsync", device_);
    return;
  }
  if (src_device.is_host() && dst_device == device_) {
    pinned_.CopyToDevice(dst, src, bytes, CurrentCudaStream());
    return;
  }
  CheckCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, CurrentCudaStream()),
            "cudaMemcpyAsync", device_);
}

void CudaDevice::CopyToHost(void* host_dst, const void* device_src, size_t bytes) {
  Synchronize();  // the streams are non-blocking: cudaMemcpy alone would not wait for them
  DeviceGuard guard(device_);
  if (bytes > 0) {
    CheckCuda(cudaMemcpy(host_dst, device_src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy",
              device_);
  }
}

void CudaDevice::CopyFromHost(void* device_dst, const void* host_src, size_t bytes) {
  Synchronize();
  DeviceGuard guard(device_);
  if (bytes > 0) {
    CheckCuda(cudaMemcpy(device_dst, host_src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy",
              device_);
  }
}

namespace {

[[maybe_unused]] const bool kRegistered = [] {
  SetCudaDeviceContexts([](int id) -> DeviceContext* { return CudaDevice::Get(id); });
  return true;
}();

}  // namespace

}  // namespace braid
