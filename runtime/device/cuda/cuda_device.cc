#include "runtime/device/cuda/cuda_device.h"

#include <glog/logging.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>

#include "braid/status.h"
#include "runtime/core/tensor.h"
#include "runtime/device/caching_allocator.h"
#include "runtime/device/device_mapping.h"

namespace braid {
namespace {

constexpr int kMaxDevices = 64;
thread_local cudaStream_t tls_stream = nullptr;

// The logical CUDA devices and the physical GPU each runs on, read once
// (runtime/device/device_mapping.h).
struct CudaDeviceMap {
  Status status;              // why there are none: CUDA's error, or a malformed mapping
  std::vector<int> physical;  // by logical id; the identity over every GPU by default
  std::string mapping;        // BRAID_CUDA_DEVICES's value ("": the identity)
  int gpus = 0;               // physical GPUs the machine has
};

const CudaDeviceMap& DeviceMap() {
  static const CudaDeviceMap* const map = [] {
    auto* m = new CudaDeviceMap();
    const cudaError_t err = cudaGetDeviceCount(&m->gpus);
    if (err != cudaSuccess) {
      cudaGetLastError();  // clear it
      m->gpus = 0;
      m->status = Status::InvalidArgument(cudaGetErrorString(err));
      return m;
    }
    if (m->gpus == 0) {
      m->status = Status::InvalidArgument("no CUDA device present");
      return m;
    }
    m->gpus = std::min(m->gpus, kMaxDevices);
    m->status = DeviceMappingFromEnvironment("BRAID_CUDA_DEVICES", m->gpus, &m->physical);
    if (m->status.ok() && m->physical.size() > static_cast<size_t>(kMaxDevices)) {
      m->status = Status::InvalidArgument("BRAID_CUDA_DEVICES lists more than " +
                                          std::to_string(kMaxDevices) + " devices");
    }
    if (!m->status.ok()) {
      m->physical.clear();
      return m;
    }
    if (!m->physical.empty()) m->mapping = std::getenv("BRAID_CUDA_DEVICES");
    for (int id = 0; m->physical.empty() && id < m->gpus; ++id) m->physical.push_back(id);
    return m;
  }();
  return *map;
}

// The physical GPU of logical device `device`, which exists.
int PhysicalId(const Device& device) { return DeviceMap().physical.at(device.id); }

// "cuda:1 (physical GPU 0)" under BRAID_CUDA_DEVICES, else "cuda:1".
std::string NameOf(const Device& device) {
  const CudaDeviceMap& map = DeviceMap();
  if (map.mapping.empty() || device.id < 0 || device.id >= static_cast<int>(map.physical.size())) {
    return device.ToString();
  }
  return device.ToString() + " (physical GPU " + std::to_string(map.physical[device.id]) + ")";
}

// Lets kernels and copies on physical GPU `from` reach GPU `to`'s memory directly (NVLink or PCIe
// peer to peer) where the hardware allows; elsewhere copies go through the host
// (cudaMemcpyPeerAsync). `device` is a logical device of `from`, for errors.
void EnablePeerAccess(const Device& device, int from, int to) {
  int can = 0;
  CheckCuda(cudaDeviceCanAccessPeer(&can, from, to), "cudaDeviceCanAccessPeer", device);
  if (can == 0) return;
  CudaDeviceGuard guard(device);
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
    CudaDeviceGuard guard(device_);
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
    CudaDeviceGuard guard(device_);
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
    CudaDeviceGuard guard(device_);
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
    CudaDeviceGuard guard(device_);  // the event was made on device_'s GPU: record it there
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
  const CudaDeviceMap& map = DeviceMap();
  if (!map.status.ok() && why_none != nullptr) *why_none = map.status.message();
  return static_cast<int>(map.physical.size());
}

CudaDeviceGuard::CudaDeviceGuard(const Device& device) : device_(device) {
  const int physical = PhysicalId(device);
  CheckCuda(cudaGetDevice(&previous_), "cudaGetDevice", device);
  if (previous_ != physical) CheckCuda(cudaSetDevice(physical), "cudaSetDevice", device);
  changed_ = previous_ != physical;
}

CudaDeviceGuard::~CudaDeviceGuard() {
  if (changed_) cudaSetDevice(previous_);
}

cudaStream_t CurrentCudaStream() { return tls_stream; }

void CheckCuda(cudaError_t err, const char* call, const Device& device) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // a failed call leaves its error behind; later calls must not see it
  const std::string message =
      std::string(call) + " on " + NameOf(device) + ": " + cudaGetErrorString(err);
  if (err == cudaErrorMemoryAllocation) throw Error(Status::ResourceExhausted(message));
  throw Error(Status::Internal(message));
}

CudaDevice* CudaDevice::Get(int id) {
  static auto* const devices = new std::array<std::atomic<CudaDevice*>, kMaxDevices>();
  static auto* const make_mu = new std::mutex();
  const Device device{DeviceType::kCuda, id};
  const CudaDeviceMap& map = DeviceMap();  // read once: no CUDA call per lookup
  const int count = static_cast<int>(map.physical.size());
  if (id < 0 || id >= count) {
    std::string why = map.status.message();
    if (map.status.ok()) {
      why = "this machine has " + std::to_string(count) + " CUDA device(s)" +
            (map.mapping.empty() ? "" : " under BRAID_CUDA_DEVICES='" + map.mapping + "'");
    }
    throw Error(Status::InvalidArgument(device.ToString() + " does not exist: " + why));
  }
  std::atomic<CudaDevice*>& slot = (*devices)[id];
  if (CudaDevice* made = slot.load(std::memory_order_acquire)) return made;
  std::lock_guard<std::mutex> lock(*make_mu);
  if (slot.load(std::memory_order_acquire) == nullptr) {
    const int physical = map.physical[id];
    for (int peer = 0; peer < count; ++peer) {
      const int peer_physical = map.physical[peer];
      if (peer_physical == physical || (*devices)[peer].load(std::memory_order_acquire) == nullptr) {
        continue;  // logical devices of one GPU share its memory: no peer access to enable
      }
      EnablePeerAccess(device, physical, peer_physical);
      EnablePeerAccess(Device{DeviceType::kCuda, peer}, peer_physical, physical);
    }
    slot.store(new CudaDevice(id, physical), std::memory_order_release);
  }
  return slot.load(std::memory_order_acquire);
}

CudaDevice::CudaDevice(int id, int physical)
    : device_{DeviceType::kCuda, id},
      physical_{DeviceType::kCuda, physical},
      allocator_(std::make_unique<CachingAllocator>(this)),
      pinned_(device_) {}

std::string CudaDevice::name() const { return NameOf(device_); }

Stream* CudaDevice::stream(int index) {
  // Invariant: callers bound stream indices by kMaxDeviceStreams (ChainStreams, the benches).
  CHECK(index >= 0 && index < kMaxDeviceStreams)
      << device_.ToString() << " has streams 0 to " << kMaxDeviceStreams - 1 << ", not " << index;
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
  CudaDeviceGuard guard(device_);
  CheckCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize", device_);
}

void* CudaDevice::RawAllocate(size_t bytes) {
  CudaDeviceGuard guard(device_);
  void* ptr = nullptr;
  CheckCuda(cudaMalloc(&ptr, bytes == 0 ? 1 : bytes), "cudaMalloc", device_);
  return ptr;
}

void CudaDevice::RawFree(void* ptr, size_t) {
  if (ptr == nullptr) return;
  CudaDeviceGuard guard(device_);
  CheckCuda(cudaFree(ptr), "cudaFree", device_);
}

int64_t CudaDevice::capacity_bytes() const {
  CudaDeviceGuard guard(device_);
  size_t free = 0, total = 0;
  CheckCuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo", device_);
  return static_cast<int64_t>(total);
}

int64_t CudaDevice::free_bytes() const {
  CudaDeviceGuard guard(device_);
  size_t free = 0, total = 0;
  CheckCuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo", device_);
  return static_cast<int64_t>(free);
}

void CudaDevice::CopyInKernel(void* dst, const Device& dst_device, const void* src,
                              const Device& src_device, size_t bytes) {
  if (bytes == 0) return;
  const cudaStream_t stream = CurrentCudaStream();
  if (dst_device.type == DeviceType::kCuda && src_device.type == DeviceType::kCuda) {
    if (SharePhysicalDevice(dst_device, src_device)) {  // one context, one address space
      CheckCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream),
                "cudaMemcpyAsync", device_);
    } else {
      CheckCuda(cudaMemcpyPeerAsync(dst, PhysicalId(dst_device), src, PhysicalId(src_device),
                                    bytes, stream),
                "cudaMemcpyPeerAsync", device_);
    }
    return;
  }
  if (src_device.is_host()) {  // to this device, or (rarely) another: read in stream order
    pinned_.CopyToDevice(dst, src, bytes, stream);
    return;
  }
  if (dst_device.is_host() && src_device == device_) {
    pinned_.CopyToHostAsync(dst, src, bytes, stream);
    return;
  }
  // From another GPU to the host: pageable, so cudaMemcpyAsync returns once the host has the bytes.
  CheckCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream), "cudaMemcpyAsync",
            device_);
}

void CudaDevice::CopyToHost(void* host_dst, const void* device_src, size_t bytes) {
  Synchronize();  // the streams are non-blocking: a copy alone would not wait for them
  if (bytes == 0) return;
  CudaDeviceGuard guard(device_);
  pinned_.CopyToHostNow(host_dst, device_src, bytes);
}

void CudaDevice::CopyFromHost(void* device_dst, const void* host_src, size_t bytes) {
  Synchronize();
  if (bytes == 0) return;
  CudaDeviceGuard guard(device_);
  CheckCuda(cudaMemcpy(device_dst, host_src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy",
            device_);
  // From pageable memory cudaMemcpy may return once the source is staged, before the DMA lands;
  // the non-blocking streams later work queues on do not wait for the legacy stream it used.
  CheckCuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize", device_);
}

std::unique_ptr<Event> CudaDevice::MarkApplicationStream(void* native_stream) {
  auto mark = std::make_unique<CudaEvent>(device_, "the application's stream");
  const cudaStream_t stream =
      native_stream == nullptr ? cudaStreamLegacy : static_cast<cudaStream_t>(native_stream);
  CudaDeviceGuard guard(device_);
  const cudaError_t err = cudaEventRecord(mark->get(), stream);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw Error(Status::InvalidArgument("recording an event on the application's stream for " +
                                        NameOf(device_) + ": " + cudaGetErrorString(err)));
  }
  return mark;
}

void CudaDevice::CheckApplicationMemory(const void* data, const std::string& what) const {
  if (data == nullptr) return;
  cudaPointerAttributes attributes{};
  const cudaError_t err = cudaPointerGetAttributes(&attributes, data);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw Error(Status::InvalidArgument(what + ": CUDA does not know its pointer (" +
                                        cudaGetErrorString(err) + ")"));
  }
  const bool on_gpu =
      attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
  if (!on_gpu || attributes.device != physical_.id) {
    throw Error(Status::InvalidArgument(
        what + " is said to be on " + NameOf(device_) + " but is " +
        (on_gpu ? "memory of physical GPU " + std::to_string(attributes.device)
                : std::string("not GPU memory"))));
  }
}

namespace {

[[maybe_unused]] const bool kRegistered = [] {
  SetDeviceContexts(DeviceType::kCuda, [](int id) -> DeviceContext* { return CudaDevice::Get(id); });
  return true;
}();

}  // namespace

}  // namespace braid
