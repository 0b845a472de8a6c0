#include "runtime/device/sim/sim_device.h"

#include <glog/logging.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "runtime/core/clock.h"
#include "runtime/device/caching_allocator.h"
#include "runtime/device/device_mapping.h"
#include "runtime/device/sim/sim_stream.h"

namespace braid {
namespace {

// cudaMalloc returns 256-byte aligned memory; sizes are accounted in the same granules.
constexpr size_t kSimAlignment = 256;

size_t Granules(size_t bytes) {
  return (std::max<size_t>(bytes, 1) + kSimAlignment - 1) / kSimAlignment * kSimAlignment;
}

struct Options {
  Options() {
    std::vector<int> ids;
    mapping_error = DeviceMappingFromEnvironment("BRAID_SIM_DEVICES", SimDevice::kMaxDevices, &ids);
    SetPhysicalIds(ids);
  }
  void SetPhysicalIds(const std::vector<int>& ids) {
    for (size_t i = 0; i < physical.size(); ++i) physical[i].store(i < ids.size() ? ids[i] : -1);
    mapped.store(static_cast<int>(ids.size()));
  }

  std::atomic<int64_t> capacity_bytes{SimDeviceOptions().capacity_bytes};
  std::atomic<int64_t> watchdog_ms{SimDeviceOptions().watchdog.count()};
  std::atomic<bool> synchronizing_allocation{SimDeviceOptions().synchronizing_allocation};
  std::atomic<int> kernel_jitter_us{0};
  std::array<std::atomic<int>, SimDevice::kMaxDevices> physical;  // -1: the device's own card
  std::atomic<int> mapped{0};  // the length of the physical_ids list
  Status mapping_error;        // BRAID_SIM_DEVICES's, if malformed; written once, at construction
};

Options& GlobalOptions() {
  static Options* const options = new Options();  // read by detached threads: never destroyed
  return *options;
}

int CardOf(int id) {
  const int card = GlobalOptions().physical[id].load(std::memory_order_relaxed);
  return card < 0 ? id : card;
}

// Guards each check-and-charge of a card's capacity (its devices allocate concurrently).
std::mutex& AccountingMutex() {
  static std::mutex* const mu = new std::mutex();
  return *mu;
}

// The driver's lock: raw allocation and free hold it while they drain their device; every launch
// on any sim device takes it briefly.
std::mutex& DriverMutex() {
  static std::mutex* const mu = new std::mutex();
  return *mu;
}

// What holds the driver lock while it drains a device ("" when nothing): for the watchdog's report.
struct DriverHolder {
  std::mutex mu;
  std::string what;  // guarded by mu
};

DriverHolder& Draining() {
  static auto* const holder = new DriverHolder();
  return *holder;
}

// Wakes the watchdog when the options change (its period follows the timeout).
std::condition_variable& WatchdogWakeup() {
  static auto* const cv = new std::condition_variable();
  return *cv;
}

std::array<std::atomic<SimDevice*>, SimDevice::kMaxDevices>& Devices() {
  static auto* const devices = new std::array<std::atomic<SimDevice*>, SimDevice::kMaxDevices>();
  return *devices;
}

std::string Seconds(int64_t ms) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", static_cast<double>(ms) / 1000);
  return text;
}

}  // namespace

// One thread for all sim devices: every period it looks for streams that have work, made no
// progress for the watchdog time, and wait on nothing that progressed; it aborts their devices.
class SimWatchdog {
 public:
  static void Start() {
    static std::once_flag once;
    std::call_once(once, [] { std::thread([] { SimWatchdog().Loop(); }).detach(); });
  }

 private:
  void Loop() {
    std::mutex mu;
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      const int64_t timeout_ms = GlobalOptions().watchdog_ms.load(std::memory_order_relaxed);
      const int64_t period_ms = std::clamp<int64_t>(timeout_ms / 4, 5, 1000);
      WatchdogWakeup().wait_for(lock, std::chrono::milliseconds(period_ms));
      CheckAll(GlobalOptions().watchdog_ms.load(std::memory_order_relaxed) * 1000000);
    }
  }

  static bool Stuck(SimStream* s, int64_t now, int64_t timeout_ns, int depth) {
    if (!s->busy() || now - s->last_progress_ns() < timeout_ns) return false;
    SimStream* on = s->waiting_on();
    if (on == nullptr || on == s || depth > 64) return true;
    return Stuck(on, now, timeout_ns, depth + 1);
  }

  static void CheckAll(int64_t timeout_ns) {
    std::vector<SimDevice*> stuck;
    const int64_t now = NowNanos();
    for (auto& slot : Devices()) {
      SimDevice* device = slot.load(std::memory_order_acquire);
      if (device == nullptr) continue;
      for (SimStream* s : device->Streams()) {
        if (Stuck(s, now, timeout_ns, 0)) {
          stuck.push_back(device);
          break;
        }
      }
    }
    if (stuck.empty()) return;
    std::string report;
    for (SimDevice* device : stuck) {
      report += (report.empty() ? "" : "; ") + device->device().ToString() + " " +
                device->DescribeStreams();
    }
    {
      std::lock_guard<std::mutex> lock(Draining().mu);
      if (!Draining().what.empty()) report += "; the driver lock is held by " + Draining().what;
    }
    const Status why = Status::DeadlineExceeded(
        "watchdog: no progress for " + Seconds(timeout_ns / 1000000) + " (SimDeviceOptions::"
        "watchdog); " + report);
    LOG(ERROR) << why.ToString();
    for (SimDevice* device : stuck) {
      device->watchdog_aborts_.fetch_add(1, std::memory_order_relaxed);
      device->Abort(why);
    }
  }
};

SimDeviceOptions GetSimDeviceOptions() {
  SimDeviceOptions o;
  o.capacity_bytes = GlobalOptions().capacity_bytes.load();
  o.watchdog = std::chrono::milliseconds(GlobalOptions().watchdog_ms.load());
  o.synchronizing_allocation = GlobalOptions().synchronizing_allocation.load();
  o.kernel_jitter_us = GlobalOptions().kernel_jitter_us.load();
  for (int i = 0; i < GlobalOptions().mapped.load(); ++i) {
    o.physical_ids.push_back(GlobalOptions().physical[i].load());
  }
  return o;
}

void SetSimDeviceOptions(const SimDeviceOptions& options) {
  auto refuse = [](const std::string& what) {
    throw Error(Status::InvalidArgument("sim device options: " + what));
  };
  if (options.capacity_bytes <= 0) {
    refuse("the capacity must be positive, got " + std::to_string(options.capacity_bytes));
  }
  if (options.watchdog.count() <= 0) {
    refuse("the watchdog must be positive, got " + std::to_string(options.watchdog.count()) +
           " ms");
  }
  if (options.physical_ids.size() > static_cast<size_t>(SimDevice::kMaxDevices)) {
    refuse(std::to_string(options.physical_ids.size()) + " physical ids, more than the " +
           std::to_string(SimDevice::kMaxDevices) + " sim devices");
  }
  for (int id : options.physical_ids) {
    if (id < 0 || id >= SimDevice::kMaxDevices) {
      refuse("physical id " + std::to_string(id) + " is not a sim device (0 to " +
             std::to_string(SimDevice::kMaxDevices - 1) + ")");
    }
  }
  GlobalOptions().capacity_bytes.store(options.capacity_bytes);
  GlobalOptions().watchdog_ms.store(options.watchdog.count());
  GlobalOptions().synchronizing_allocation.store(options.synchronizing_allocation);
  GlobalOptions().kernel_jitter_us.store(std::max(0, options.kernel_jitter_us));
  GlobalOptions().SetPhysicalIds(options.physical_ids);
  WatchdogWakeup().notify_all();
}

int SimKernelJitterMicros() { return GlobalOptions().kernel_jitter_us.load(std::memory_order_relaxed); }

SimDevice* SimDevice::Get(int id) {
  if (id < 0 || id >= kMaxDevices) {
    throw Error(Status::InvalidArgument("sim:" + std::to_string(id) + " does not exist (braid "
                                        "simulates sim:0 to sim:" +
                                        std::to_string(kMaxDevices - 1) + ")"));
  }
  if (!GlobalOptions().mapping_error.ok()) throw Error(GlobalOptions().mapping_error);
  std::atomic<SimDevice*>& slot = Devices()[id];
  SimDevice* device = slot.load(std::memory_order_acquire);
  if (device != nullptr) return device;
  static std::mutex* const make_mu = new std::mutex();
  std::lock_guard<std::mutex> lock(*make_mu);
  device = slot.load(std::memory_order_acquire);
  if (device == nullptr) {
    device = new SimDevice(id);  // lives for the process: its stream threads never stop
    slot.store(device, std::memory_order_release);
    SimWatchdog::Start();
  }
  return device;
}

SimDevice::SimDevice(int id)
    : device_{DeviceType::kSim, id}, allocator_(std::make_unique<CachingAllocator>(this)) {}

Stream* SimDevice::stream(int index) {
  // Invariant: callers bound stream indices by kMaxDeviceStreams (ChainStreams, the benches).
  CHECK(index >= 0 && index < kMaxDeviceStreams)
      << device_.ToString() << " has streams 0 to " << kMaxDeviceStreams - 1 << ", not " << index;
  std::lock_guard<std::mutex> lock(streams_mu_);
  while (static_cast<int>(streams_.size()) <= index) {
    streams_.push_back(std::make_unique<SimStream>(this, static_cast<int>(streams_.size())));
  }
  return streams_[index].get();
}

std::vector<SimStream*> SimDevice::Streams() const {
  std::lock_guard<std::mutex> lock(streams_mu_);
  std::vector<SimStream*> streams;
  for (const auto& s : streams_) streams.push_back(s.get());
  return streams;
}

std::unique_ptr<Event> SimDevice::CreateEvent(std::string label) {
  return std::make_unique<SimEvent>(std::move(label));
}

void SimDevice::Synchronize() {
  std::vector<SimStream*> streams = Streams();
  std::vector<uint64_t> targets;
  for (SimStream* s : streams) targets.push_back(s->Enqueued());
  for (size_t i = 0; i < streams.size(); ++i) streams[i]->WaitServed(targets[i]);
}

Device SimDevice::physical_device() const { return Device{DeviceType::kSim, CardOf(device_.id)}; }

std::string SimDevice::name() const {
  if (GlobalOptions().mapped.load(std::memory_order_relaxed) == 0) return device_.ToString();
  return device_.ToString() + " (physical sim GPU " + std::to_string(CardOf(device_.id)) + ")";
}

std::vector<SimDevice*> SimDevice::OnMyCard() const {
  std::vector<SimDevice*> devices;
  for (auto& slot : Devices()) {
    SimDevice* device = slot.load(std::memory_order_acquire);
    if (device != nullptr && SharePhysicalDevice(device->device_, device_)) {
      devices.push_back(device);
    }
  }
  return devices;
}

void SimDevice::WaitUntilDrained(const std::string& call) {
  // Invariant: braid drains a device from host code only, never from a kernel.
  CHECK(SimStream::Current() == nullptr)
      << "raw memory of " << device_.ToString() << " is allocated and freed from the host, "
      << "never from a kernel";
  const std::vector<SimDevice*> card = OnMyCard();  // cudaMalloc synchronises the whole GPU
  std::string names;
  for (SimDevice* device : card) names += (names.empty() ? "" : ", ") + device->device_.ToString();
  {
    std::lock_guard<std::mutex> lock(Draining().mu);
    Draining().what = call + ", which waits for " + names + " to drain";
  }
  for (SimDevice* device : card) device->Synchronize();
  std::lock_guard<std::mutex> lock(Draining().mu);
  Draining().what.clear();
}

std::unique_lock<std::mutex> SimDevice::DriverLockForLaunch() {
  if (!GlobalOptions().synchronizing_allocation.load(std::memory_order_relaxed)) return {};
  return std::unique_lock<std::mutex>(DriverMutex());
}

void* SimDevice::RawAllocate(size_t bytes) {
  std::unique_lock<std::mutex> driver;
  if (GlobalOptions().synchronizing_allocation.load(std::memory_order_relaxed)) {
    driver = std::unique_lock<std::mutex>(DriverMutex());
    WaitUntilDrained("a raw allocation of " + HumanBytes(Granules(bytes)) + " on " + name());
  }
  const auto size = static_cast<int64_t>(Granules(bytes));
  Charge(size, bytes);
  raw_allocations_.fetch_add(1);
  void* ptr = std::aligned_alloc(kSimAlignment, static_cast<size_t>(size));
  if (ptr == nullptr) {
    in_use_.fetch_sub(size);
    throw Error(Status::ResourceExhausted("out of host memory backing " + device_.ToString() +
                                          ": cannot allocate " + HumanBytes(size)));
  }
  std::memset(ptr, 0xFF, static_cast<size_t>(size));  // garbage, as on a GPU: NaN as float
  return ptr;
}

void SimDevice::Charge(int64_t size, size_t bytes) {
  const int64_t capacity = capacity_bytes();
  std::lock_guard<std::mutex> lock(AccountingMutex());
  const std::vector<SimDevice*> card = OnMyCard();
  int64_t used = 0;
  for (SimDevice* device : card) used += device->in_use_.load();
  if (used + size > capacity) {
    std::string held;  // "sim:0 512.00 KiB, sim:1 0 B" when the card has several devices
    for (SimDevice* device : card) {
      held += (held.empty() ? "" : ", ") + device->device_.ToString() + " " +
              HumanBytes(device->in_use_.load());
    }
    throw Error(Status::ResourceExhausted(
        "out of memory on " + name() + ": cannot allocate " + HumanBytes(size) + " (" +
        std::to_string(bytes) + " bytes); capacity " + HumanBytes(capacity) + ", " +
        HumanBytes(used) + " in use" + (card.size() > 1 ? " (" + held + ")" : "") + ", " +
        HumanBytes(capacity - used) + " free"));
  }
  const int64_t mine = in_use_.fetch_add(size) + size;
  if (mine > peak_.load()) peak_.store(mine);  // under AccountingMutex: no lost update
}

void SimDevice::RawFree(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  std::unique_lock<std::mutex> driver;
  if (GlobalOptions().synchronizing_allocation.load(std::memory_order_relaxed)) {
    driver = std::unique_lock<std::mutex>(DriverMutex());
    WaitUntilDrained("a raw free of " + HumanBytes(Granules(bytes)) + " on " + name());
  }
  std::free(ptr);
  {
    std::lock_guard<std::mutex> lock(AccountingMutex());
    in_use_.fetch_sub(static_cast<int64_t>(Granules(bytes)));
  }
  raw_frees_.fetch_add(1);
}

int64_t SimDevice::capacity_bytes() const {
  return GlobalOptions().capacity_bytes.load(std::memory_order_relaxed);
}

int64_t SimDevice::free_bytes() const {
  int64_t used = 0;
  for (const SimDevice* device : OnMyCard()) used += device->in_use_.load();
  return std::max<int64_t>(0, capacity_bytes() - used);
}

void SimDevice::CopyInKernel(void* dst, const Device& dst_device, const void* src,
                             const Device& src_device, size_t bytes) {
  // Invariant: the copy kernels braid launches on a device touch its memory.
  CHECK(SameMemory(dst_device, device_) || SameMemory(src_device, device_))
      << "a copy on " << device_.ToString() << " between " << src_device.ToString() << " and "
      << dst_device.ToString();
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

void SimDevice::CopyToHost(void* host_dst, const void* device_src, size_t bytes) {
  Synchronize();
  if (bytes > 0) std::memcpy(host_dst, device_src, bytes);
}

void SimDevice::CopyFromHost(void* device_dst, const void* host_src, size_t bytes) {
  Synchronize();
  if (bytes > 0) std::memcpy(device_dst, host_src, bytes);
}

namespace {

// The work queued on a sim stream up to a point (its items numbered below `target`): unlike an
// event recorded there, nothing of it sits in the stream's queue, so it may be dropped at any time
// (a request that ends at its deadline drops the marks of the streams it waited for).
class SimStreamMark final : public Event {
 public:
  SimStreamMark(SimStream* stream, uint64_t target)
      : stream_(stream), target_(target), label_("the application's stream") {}
  bool Query() const override { return stream_ == nullptr || stream_->Served(target_); }
  void HostWait() const override {
    if (stream_ != nullptr) stream_->WaitServed(target_);
  }
  const std::string& label() const override { return label_; }

 private:
  SimStream* const stream_;  // null: nothing to wait for; streams live as long as their device
  const uint64_t target_;
  const std::string label_;
};

}  // namespace

std::unique_ptr<Event> SimDevice::MarkApplicationStream(void* native_stream) {
  if (native_stream == nullptr) return std::make_unique<SimStreamMark>(nullptr, 0);
  const auto streams = Streams();
  auto found = std::find_if(streams.begin(), streams.end(),
                            [&](SimStream* s) { return static_cast<void*>(s) == native_stream; });
  if (found == streams.end()) {
    throw Error(Status::InvalidArgument("the stream given is not one of " + name() + "'s"));
  }
  return std::make_unique<SimStreamMark>(*found, (*found)->Enqueued());
}

SimDeviceStats SimDevice::stats() const {
  SimDeviceStats s;
  s.kernels_launched = kernels_launched_.load();
  s.raw_allocations = raw_allocations_.load();
  s.raw_frees = raw_frees_.load();
  s.bytes_in_use = in_use_.load();
  s.peak_bytes_in_use = peak_.load();
  s.watchdog_aborts = watchdog_aborts_.load();
  return s;
}

void SimDevice::Abort(const Status& why) {
  // Every stream is marked before any waiter wakes: a Run woken by its failed kernel returns and
  // may queue its next work at once, which must not fall before a later stream's mark (seen:
  // DeviceExecutorTest.TheWatchdogEndsAHungRunWithAnErrorAndTheNetRunsAgain failed once so).
  const auto streams = Streams();
  for (SimStream* s : streams) s->Abort(why);
  for (SimStream* s : streams) s->WakeAborted();
}

std::string SimDevice::DescribeStreams() const {
  std::string s;
  for (SimStream* stream : Streams()) s += (s.empty() ? "" : "; ") + stream->Describe();
  return s.empty() ? "has no streams" : s;
}

void SimDevice::WaitInKernel(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                             const std::function<bool()>& ready, const std::string& what) {
  WaitInKernel(lock, cv, ready, [&] { return what; });
}

void SimDevice::WaitInKernel(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                             const std::function<bool()>& ready,
                             const std::function<std::string()>& what) {
  SimStream* stream = SimStream::Current();
  // Invariant: only kernels (running on a sim stream) call WaitInKernel.
  CHECK(stream != nullptr) << "SimDevice::WaitInKernel outside a sim kernel";
  if (ready()) return;
  Status why;
  while (!ready()) {
    stream->SetKernelWait(what(), &cv);
    if (stream->KernelAborted(&why)) {
      stream->SetKernelWait("", nullptr);
      throw Error(why);
    }
    cv.wait_for(lock, std::chrono::milliseconds(20));
  }
  stream->SetKernelWait("", nullptr);
}

namespace {

[[maybe_unused]] const bool kRegistered = [] {
  SetDeviceContexts(DeviceType::kSim, [](int id) -> DeviceContext* { return SimDevice::Get(id); });
  return true;
}();

}  // namespace

}  // namespace braid
