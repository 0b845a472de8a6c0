// A sim device's streams and events (runtime/device/sim/sim_device.h has the semantics; this is
// how).
//
// A SimStream is a queue of items (a kernel, an event record, an event wait) served in order by
// the stream's own thread. Items carry a sequence number: Synchronize waits until every item
// numbered before its call has been served, and Abort fails every item numbered before it (a
// kernel is abandoned, a wait skipped; a record still completes, so waiters elsewhere go on).
// A SimEvent counts records: Record gives it a new generation, the stream completes it when it
// reaches the record, and a Wait captures the latest generation at the time of the call.
//
// Thread safety: SimStream's queue and state are guarded by its mutex; the thread serves items
// without holding it. A SimEvent's counters are guarded by its own mutex. An event must be
// recorded on one stream at a time: recording it on another while a record is pending is a bug
// (CHECK).
#ifndef BRAID_RUNTIME_DEVICE_SIM_SIM_STREAM_H_
#define BRAID_RUNTIME_DEVICE_SIM_SIM_STREAM_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/core/device_context.h"

namespace braid {

class SimDevice;
class SimStream;

// SimDeviceOptions::kernel_jitter_us as now set.
int SimKernelJitterMicros();

class SimEvent final : public Event {
 public:
  explicit SimEvent(std::string label) : label_(std::move(label)) {}
  bool Query() const override;
  void HostWait() const override;
  const std::string& label() const override { return label_; }

  // A new record on `stream`; returns its generation.
  uint64_t AddRecord(SimStream* stream);
  // The latest generation recorded, and the stream recording it (null if never recorded).
  uint64_t latest(SimStream** recorder) const;
  void Complete(uint64_t generation);
  // Blocks until `generation` has completed or `give_up()` holds (checked every few ms and when
  // notified); returns whether it completed.
  template <typename GiveUp>
  bool WaitFor(uint64_t generation, GiveUp&& give_up);
  // Wakes threads blocked in WaitFor so they check give_up() again.
  void Notify();

 private:
  const std::string label_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  uint64_t recorded_ = 0;          // guarded by mu_
  uint64_t completed_ = 0;         // guarded by mu_
  SimStream* recorder_ = nullptr;  // guarded by mu_
};

class SimStream final : public Stream {
 public:
  SimStream(SimDevice* device, int index);
  ~SimStream() override;

  const Device& device() const override;
  int index() const override { return index_; }
  void Launch(KernelTask* task) override;
  void Record(Event* event) override;
  void Wait(Event* event, WaitSpan* span) override;
  void Synchronize() override;

  // The sequence number the next item will get: Synchronize-like waits take it as a target.
  uint64_t Enqueued() const;
  // Blocks until every item numbered before `target` has been served.
  void WaitServed(uint64_t target);
  // Whether every item numbered before `target` has been served.
  bool Served(uint64_t target) const;
  // Fails every item queued so far (see the file comment) with `why`; WakeAborted then wakes a
  // blocked wait. Two steps, so that a device marks all its streams before any waiter wakes (a Run
  // woken by its failed kernel must not queue work on a stream the abort has not reached yet).
  void Abort(const Status& why);
  void WakeAborted();

  // For the watchdog: whether the stream has work, and when it last started or finished an item.
  bool busy() const;
  int64_t last_progress_ns() const { return last_progress_ns_.load(std::memory_order_relaxed); }
  // The stream whose event this stream is waiting for, or null.
  SimStream* waiting_on() const;
  // "stream 1: waits for the event of op #3 (...) on sim:0 stream 0; 2 more queued".
  std::string Describe() const;

  // The stream the calling thread serves, or null (host threads).
  static SimStream* Current();
  // For SimDevice::WaitInKernel (on this stream's thread): whether the device aborted the kernel
  // being served (then *why says why), and what the kernel waits for (empty: nothing).
  bool KernelAborted(Status* why) const;
  void SetKernelWait(const std::string& what, std::condition_variable* cv);

 private:
  struct Item {
    enum class Kind { kKernel, kRecord, kWait } kind = Kind::kKernel;
    KernelTask* task = nullptr;
    SimEvent* event = nullptr;
    uint64_t generation = 0;
    uint64_t seq = 0;
    WaitSpan* span = nullptr;
  };

  void Push(Item item);
  void Serve();
  void Run(const Item& item, bool aborted, const Status& why);
  std::string DescribeItem(const Item& item) const;

  SimDevice* const device_;
  const int index_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;         // items queued, or the thread asked to stop
  mutable std::condition_variable done_cv_;  // an item was served
  std::deque<Item> queue_;                  // guarded by mu_
  bool serving_ = false;                    // guarded by mu_: current_ is being served
  Item current_;                            // guarded by mu_
  uint64_t next_seq_ = 0;                   // guarded by mu_
  uint64_t served_ = 0;                     // guarded by mu_: items numbered below are done
  std::atomic<uint64_t> abort_before_{0};   // items numbered below fail; written under mu_
  Status abort_status_;                     // guarded by mu_
  std::atomic<uint64_t> serving_seq_{0};    // the number of the item being served
  std::string kernel_wait_;                 // guarded by mu_: what the kernel waits for
  std::condition_variable* kernel_cv_ = nullptr;  // guarded by mu_
  bool stop_ = false;                       // guarded by mu_
  std::atomic<int64_t> last_progress_ns_{0};
  std::thread thread_;
};

template <typename GiveUp>
bool SimEvent::WaitFor(uint64_t generation, GiveUp&& give_up) {
  std::unique_lock<std::mutex> lock(mu_);
  while (completed_ < generation) {
    if (give_up()) return false;
    cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace braid

#endif  // BRAID_RUNTIME_DEVICE_SIM_SIM_STREAM_H_
