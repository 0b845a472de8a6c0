// The device interface: streams, events, raw memory and copies, one DeviceContext per device.
//
// Policies that involve devices (the executors' event edges, allocators, collectives) are written
// once over this interface; a backend supplies the raw calls: `cpu` (synchronous: no streams,
// kernels run on the calling thread), `sim` (runtime/device/sim/sim_device.h: a simulated GPU) and,
// later, `cuda`.
//
//   DeviceContext* sim0 = GetDeviceContext(ParseDevice("sim:0"));
//   std::unique_ptr<Event> done = sim0->CreateEvent("producer");
//   sim0->stream(0)->Launch(&task);   // returns at once; task.Execute() runs on stream 0 later
//   sim0->stream(0)->Record(done.get());
//   sim0->stream(1)->Wait(done.get());    // stream 1's later work waits, on the device
//   done->HostWait();                     // the calling thread waits
//
// Ownership and thread safety: contexts live for the whole process (never destroyed) and every
// method may be called from any thread. A stream serves its work in the order it was given; two
// threads launching onto one stream interleave in the order their calls take its lock. An Event is
// owned by whoever created it and must outlive the work that records or waits on it.
#ifndef BRAID_RUNTIME_CORE_DEVICE_CONTEXT_H_
#define BRAID_RUNTIME_CORE_DEVICE_CONTEXT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "braid/status.h"
#include "runtime/core/allocator.h"
#include "runtime/core/device.h"

namespace braid {

// Work a stream runs: one op's kernel, in practice. Owned by the launcher, which keeps it alive
// until the stream has run or abandoned it.
class KernelTask {
 public:
  virtual ~KernelTask() = default;
  // Runs the kernel on the stream's thread. Must not throw: a task reports its own failures.
  virtual void Execute() = 0;
  // Called instead of Execute when the device gives up on the task (its watchdog fired).
  virtual void Abandon(const Status& why) = 0;
  // What the task is, for the watchdog's report: "op #3 (Conv 'conv1') of net 'train'".
  virtual std::string Describe() const = 0;
};

class Event {
 public:
  virtual ~Event() = default;
  // True once the work captured by the latest Record has run (true if never recorded).
  virtual bool Query() const = 0;
  // Blocks the calling thread until the work captured by the latest Record has run.
  virtual void HostWait() const = 0;
  // Who records the event, for reports ("op #3 (Conv 'conv1') of net 'train'").
  virtual const std::string& label() const = 0;
};

// When a stream waited for an event (steady clock ns; -1: unknown). Several waits widen one span.
struct WaitSpan {
  int64_t start_ns = -1;
  int64_t end_ns = -1;
};

class Stream {
 public:
  virtual ~Stream() = default;
  virtual const Device& device() const = 0;
  virtual int index() const = 0;
  // Queues `task`; returns without waiting for it.
  virtual void Launch(KernelTask* task) = 0;
  // Captures the work queued on this stream so far in `event` (replacing what it captured before).
  virtual void Record(Event* event) = 0;
  // Work queued on this stream from now on starts only after the work `event` captured now has
  // run: a wait on the device, the calling thread does not block. The event may belong to
  // another device. `span`, when given, gets when the device waited (streams that can tell: sim);
  // it must outlive the wait.
  virtual void Wait(Event* event, WaitSpan* span = nullptr) = 0;
  // Blocks the calling thread until all work queued so far has run.
  virtual void Synchronize() = 0;
  // Runs `kernel` now on the calling thread, as this stream's work, with shapes free to change
  // (an op whose output sizes its launcher could not know; the caller waited for its inputs).
  // cpu and sim run it with the device current; cuda also makes this stream the one its CUDA
  // calls queue on, so work queued later on the stream follows it.
  virtual void RunHere(const std::function<void()>& kernel);
};

// Streams an asynchronous device has (sim and cuda alike): executors spread work over at most
// this many.
inline constexpr int kMaxDeviceStreams = 64;

class DeviceContext {
 public:
  virtual ~DeviceContext() = default;
  virtual const Device& device() const = 0;
  // False for cpu: its kernels run where they are called and it has no streams.
  virtual bool is_async() const = 0;
  // Stream `index` (0 to kMaxDeviceStreams - 1) of the device, made on first use.
  virtual Stream* stream(int index) = 0;
  virtual std::unique_ptr<Event> CreateEvent(std::string label) = 0;
  // Blocks until every stream of the device has run all work queued so far.
  virtual void Synchronize() = 0;

  // Raw device memory: what allocators sit on. RawAllocate throws braid::Error (out of memory)
  // naming the device, the request, the capacity and what is in use.
  virtual void* RawAllocate(size_t bytes) = 0;
  virtual void RawFree(void* ptr, size_t bytes) = 0;
  virtual int64_t capacity_bytes() const = 0;
  virtual int64_t free_bytes() const = 0;
  // The allocator tensors on this device take their storage from.
  virtual Allocator* allocator() = 0;

  // The physical device this logical device runs on: itself unless a device mapping
  // (runtime/device/device_mapping.h) puts it on another device's card; every cpu device: cpu:0.
  virtual Device physical_device() const { return device(); }
  // The device for messages: "cuda:1 (physical GPU 0)" under a device mapping, else "cuda:1".
  virtual std::string name() const { return device().ToString(); }

  // Copies `bytes` from `src` (on `src_device`) to `dst` (on `dst_device`), one of them this
  // device, from a kernel running on this device (so in its stream's order; a host kernel after
  // its executor waited for what wrote `src`). Never waits for the devices.
  virtual void CopyInKernel(void* dst, const Device& dst_device, const void* src,
                            const Device& src_device, size_t bytes) = 0;
  // Copies between host memory and this device's memory from the host, after the device has run
  // all work queued so far (like cudaMemcpy).
  virtual void CopyToHost(void* host_dst, const void* device_src, size_t bytes) = 0;
  virtual void CopyFromHost(void* device_dst, const void* host_src, size_t bytes) = 0;

  // An event capturing the work an application queued so far on its own stream of this device:
  // `native_stream` is a cudaStream_t on cuda (null: CUDA's legacy default stream; a program built
  // with per-thread default streams passes cudaStreamPerThread), a Stream* of this device on sim
  // (braid's tests stand for the application; null: nothing to wait for). cpu has no streams: its
  // event is complete. Throws braid::Error (InvalidArgument) for a sim stream of another device.
  virtual std::unique_ptr<Event> MarkApplicationStream(void* native_stream) = 0;
  // Throws braid::Error (InvalidArgument, starting with `what`) when `data` is known not to be
  // memory of this device (cuda asks cudaPointerGetAttributes; sim and cpu cannot tell).
  virtual void CheckApplicationMemory(const void* /*data*/, const std::string& /*what*/) const {}
};

// Copies `bytes` from `src` (on `src_device`) to `dst` (on `dst_device`), any two devices, from the
// host: after the devices involved have run all work queued so far, and returning when the copy is
// done (like cudaMemcpy). Between two devices of one kind it copies on the device (stream 0 of
// `dst_device`: peer to peer, or within one GPU); between kinds through the host.
void CopyBetweenDevices(void* dst, const Device& dst_device, const void* src,
                        const Device& src_device, size_t bytes);

// The context of `device`, made on first use. Throws braid::Error for a device braid cannot use
// (a CUDA device in a build without the CUDA backend, or on a machine without one: the error
// carries CUDA's).
DeviceContext* GetDeviceContext(const Device& device);
// The physical device `device` runs on (GetDeviceContext(device)->physical_device(); cpu:0 for
// every cpu device). Throws as GetDeviceContext.
Device PhysicalDevice(const Device& device);
// Whether `a` and `b` run on one physical device: two logical GPUs of one card, or any two cpu
// devices. The one test of sharing that device locks, sim's shared capacity and drains, CUDA's
// peer access and copies, and the collectives' engine choice (runtime/device/collective.h) all use.
bool SharePhysicalDevice(const Device& a, const Device& b);

// Installs the contexts of an asynchronous device kind (kSim or kCuda): each backend
// (runtime/device/sim/sim_device.h, runtime/device/cuda/cuda_device.h) registers itself when
// libbraid loads, so this interface never includes a backend. `get(id)` returns the context of
// device type:id or throws braid::Error.
void SetDeviceContexts(DeviceType type, DeviceContext* (*get)(int id));

// The device whose kernel the calling thread is running: a sim device's id on its stream threads,
// cpu:0 on every other thread. Host code may not dereference memory of a non-host device.
const Device& CurrentDevice();
// Makes `device` the calling thread's CurrentDevice() while it lives (stream threads; kernels a
// device runs synchronously on the launching thread).
class CurrentDeviceScope {
 public:
  explicit CurrentDeviceScope(const Device& device);
  ~CurrentDeviceScope();
  CurrentDeviceScope(const CurrentDeviceScope&) = delete;
  CurrentDeviceScope& operator=(const CurrentDeviceScope&) = delete;

 private:
  Device previous_;
};

// The stream whose work the calling thread is preparing (a launcher sizing its kernel's outputs):
// a device's caching allocator gives the blocks it hands out meanwhile to that stream
// (runtime/device/caching_allocator.h). Null (the default): stream 0 of the allocating device.
Stream* AllocationStream();
class AllocationStreamScope {
 public:
  explicit AllocationStreamScope(Stream* stream);
  ~AllocationStreamScope();
  AllocationStreamScope(const AllocationStreamScope&) = delete;
  AllocationStreamScope& operator=(const AllocationStreamScope&) = delete;

 private:
  Stream* previous_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_DEVICE_CONTEXT_H_
