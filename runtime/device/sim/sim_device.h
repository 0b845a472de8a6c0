// The simulated GPU, "sim:N": the device interface (runtime/core/device_context.h) on the CPU, with
// the semantics of CUDA that make multi-device code hard, so that every multi-device policy runs
// and is tested on machines without a GPU. Faithful in these points:
//  - Streams. Each stream is a queue served in order by a thread of its own. Launch queues a kernel
//    and returns at once; the kernel runs later on the stream's thread. Kernels are braid's CPU
//    kernels, so results on sim are bit-identical to cpu with the same intra-op thread count.
//    A kernel may not change a tensor's shape, type or storage: the launcher fixed them, as a CUDA
//    kernel's arguments and memory are fixed on the host before it is queued.
//  - Events: Record on a stream, Wait from another stream of any sim device (on the device: the
//    host does not block), Query, HostWait.
//  - Memory of its own with a capacity (default 16 GiB, SimDeviceOptions): tensors take it through
//    the device's CachingAllocator (runtime/device/caching_allocator.h); a raw allocation that does not
//    fit fails as on a full card, with an error naming the device, the request, the capacity
//    and the bytes in use. Fresh memory holds garbage (0xFF bytes: NaN as float), so a kernel
//    reading what nothing wrote shows it. Host code that dereferences device memory is refused (Tensor::data,
//    OperatorBase::Input name the blob and both devices).
//  - Logical devices (runtime/device/device_mapping.h): SimDeviceOptions::physical_ids, seeded from
//    BRAID_SIM_DEVICES (e.g. "0,0": sim:0 and sim:1 on one card), puts several devices on one
//    simulated card. Each keeps its own streams, allocator and statistics; they share the card's
//    capacity (an out-of-memory error names every device on the card and what each holds), and a
//    raw allocation or free on any of them drains all of them, as cudaMalloc synchronises the
//    whole GPU.
//  - The driver lock. RawAllocate and RawFree hold a process-wide lock (the driver's) while they
//    wait until every stream of their device has drained, as cudaMalloc and cudaFree synchronise
//    the device; every kernel launch on any sim device takes the same lock briefly. This is what
//    deadlocks a parallel first iteration that allocates while a collective is half launched.
//    synchronizing_allocation = false turns it off (tests).
//  - A watchdog: a stream that has work but has made no progress for `watchdog` (default 60 s),
//    and waits on nothing that has, aborts its device. Every kernel queued on the device then
//    fails (KernelTask::Abandon) with one error naming the device and, per stream, the kernel it
//    ran or the event it waited for and how much work was queued behind it; kernels blocked in
//    SimDevice::WaitInKernel wake with that error. Work queued afterwards runs normally.
// Not simulated: device memory is host memory (a host thread could read it; braid's checks refuse
// it, not hardware); a kernel's scratch buffers (runtime/exec/scratch.h) are its stream thread's
// host memory; a copy costs a memcpy.
//
//   SimDevice* sim0 = SimDevice::Get(0);
//   sim0->RawAllocate(1 << 20);            // counts against the capacity
//
// Thread safety: every method may be called from any thread. Devices live for the whole process.
#ifndef BRAID_RUNTIME_DEVICE_SIM_SIM_DEVICE_H_
#define BRAID_RUNTIME_DEVICE_SIM_SIM_DEVICE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/device_context.h"

namespace braid {

struct SimDeviceOptions {
  int64_t capacity_bytes = int64_t{16} << 30;
  std::chrono::milliseconds watchdog{60000};
  bool synchronizing_allocation = true;
  // Each kernel starts after a random delay of up to this many microseconds (0: none), so that
  // streams interleave differently run after run: stress tests use it to expose missing waits.
  int kernel_jitter_us = 0;
  // Logical sim:i runs on simulated card physical_ids[i] (each in [0, SimDevice::kMaxDevices));
  // a device beyond the list on the card of its own number; empty: every device on its own card.
  // At start: BRAID_SIM_DEVICES (runtime/device/device_mapping.h), read once; a malformed value
  // makes every SimDevice::Get throw InvalidArgument naming it.
  std::vector<int> physical_ids;
};

// The options of every sim device: set them before devices are used (tools, tests); Set applies
// to existing devices too, and throws braid::Error (changing nothing) for a capacity or watchdog
// that is not positive or a physical id that is not a sim device.
SimDeviceOptions GetSimDeviceOptions();
void SetSimDeviceOptions(const SimDeviceOptions& options);

// Statistics of one sim device, since the process started.
struct SimDeviceStats {
  int64_t kernels_launched = 0;
  int64_t raw_allocations = 0;
  int64_t raw_frees = 0;
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;
  int64_t watchdog_aborts = 0;
};

class SimStream;

class SimDevice final : public DeviceContext {
 public:
  static constexpr int kMaxDevices = 64;

  // Device sim:id, made on first use; throws braid::Error for an id beyond kMaxDevices.
  static SimDevice* Get(int id);

  const Device& device() const override { return device_; }
  bool is_async() const override { return true; }
  Stream* stream(int index) override;
  std::unique_ptr<Event> CreateEvent(std::string label) override;
  void Synchronize() override;

  void* RawAllocate(size_t bytes) override;
  void RawFree(void* ptr, size_t bytes) override;
  int64_t capacity_bytes() const override;
  int64_t free_bytes() const override;
  Allocator* allocator() override { return allocator_.get(); }
  Device physical_device() const override;  // sim:<card>
  std::string name() const override;        // "sim:1 (physical sim GPU 0)" under a mapping

  void CopyInKernel(void* dst, const Device& dst_device, const void* src, const Device& src_device,
                    size_t bytes) override;
  void CopyToHost(void* host_dst, const void* device_src, size_t bytes) override;
  void CopyFromHost(void* device_dst, const void* host_src, size_t bytes) override;
  // `native_stream`: a Stream* of this device (braid's tests stand for the application), looked up
  // among the device's streams before it is used.
  std::unique_ptr<Event> MarkApplicationStream(void* native_stream) override;

  SimDeviceStats stats() const;

  // For a kernel running on one of this process's sim streams: blocks until ready() holds (checked
  // with `lock` held; notify `cv` when it may have changed). `what` is what the kernel waits for,
  // for the watchdog's report; the overload with a function asks it again at each wakeup (with
  // `lock` held), so the report says what the kernel waits for now. Throws braid::Error with the
  // watchdog's message if the kernel's device is aborted meanwhile. Collectives wait for their
  // peers with this.
  static void WaitInKernel(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                           const std::function<bool()>& ready, const std::string& what);
  static void WaitInKernel(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                           const std::function<bool()>& ready,
                           const std::function<std::string()>& what);

  // Aborts the device now, as its watchdog would (tests): queued kernels fail with `why`.
  void Abort(const Status& why);

  // For SimStream::Launch: the driver lock, held while a kernel is queued (an empty lock when
  // synchronizing_allocation is off); and the launch count.
  static std::unique_lock<std::mutex> DriverLockForLaunch();
  void CountLaunch() { kernels_launched_.fetch_add(1, std::memory_order_relaxed); }
  // The watchdog's report of the device's streams: what each runs or waits for.
  std::string DescribeStreams() const;

 private:
  friend class SimWatchdog;
  explicit SimDevice(int id);
  // Blocks until no stream of any device on this device's card has work (caller holds the driver
  // lock); `call` names the raw call for the watchdog's report meanwhile.
  void WaitUntilDrained(const std::string& call);
  // Counts `size` bytes (`bytes` requested) against the card's capacity, or throws
  // ResourceExhausted naming every device on the card.
  void Charge(int64_t size, size_t bytes);
  // The devices made so far that run on this device's card (this one included).
  std::vector<SimDevice*> OnMyCard() const;
  // Streams made so far (their count grows only).
  std::vector<SimStream*> Streams() const;

  const Device device_;
  std::unique_ptr<Allocator> allocator_;
  mutable std::mutex streams_mu_;
  std::vector<std::unique_ptr<SimStream>> streams_;  // guarded by streams_mu_; never shrinks
  std::atomic<int64_t> in_use_{0}, peak_{0}, raw_allocations_{0}, raw_frees_{0};
  std::atomic<int64_t> kernels_launched_{0}, watchdog_aborts_{0};
};

}  // namespace braid

#endif  // BRAID_RUNTIME_DEVICE_SIM_SIM_DEVICE_H_
