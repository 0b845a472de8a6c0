#include "runtime/device/sim/sim_stream.h"

#include <glog/logging.h>

#include <chrono>
#include <random>

#include "runtime/core/clock.h"
#include "runtime/core/tensor.h"
#include "runtime/device/sim/sim_device.h"

namespace braid {
namespace {

thread_local SimStream* tls_stream = nullptr;

}  // namespace

bool SimEvent::Query() const {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_ >= recorded_;
}

void SimEvent::HostWait() const {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = recorded_;
  cv_.wait(lock, [&] { return completed_ >= target; });
}

uint64_t SimEvent::AddRecord(SimStream* stream) {
  std::lock_guard<std::mutex> lock(mu_);
  // Invariant: braid records an event on one stream at a time (executors, allocator).
  CHECK(recorder_ == nullptr || recorder_ == stream || completed_ == recorded_)
      << "event '" << label_ << "' recorded on a second stream while a record is pending";
  recorder_ = stream;
  return ++recorded_;
}

uint64_t SimEvent::latest(SimStream** recorder) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (recorder != nullptr) *recorder = recorder_;
  return recorded_;
}

void SimEvent::Complete(uint64_t generation) {
  // Notified under the lock: a waiter may destroy the event as soon as it sees the completion.
  std::lock_guard<std::mutex> lock(mu_);
  if (generation > completed_) completed_ = generation;
  cv_.notify_all();
}

void SimEvent::Notify() { cv_.notify_all(); }

SimStream::SimStream(SimDevice* device, int index) : device_(device), index_(index) {
  thread_ = std::thread([this] { Serve(); });
}

SimStream::~SimStream() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  thread_.join();
}

const Device& SimStream::device() const { return device_->device(); }

SimStream* SimStream::Current() { return tls_stream; }

void SimStream::Launch(KernelTask* task) {
  std::unique_lock<std::mutex> driver = SimDevice::DriverLockForLaunch();
  device_->CountLaunch();
  Push({Item::Kind::kKernel, task, nullptr, 0, 0});
}

void SimStream::Record(Event* event) {
  auto* e = static_cast<SimEvent*>(event);
  Push({Item::Kind::kRecord, nullptr, e, e->AddRecord(this), 0});
}

void SimStream::Wait(Event* event, WaitSpan* span) {
  auto* e = static_cast<SimEvent*>(event);
  const uint64_t generation = e->latest(nullptr);
  if (generation == 0) return;  // never recorded: nothing to wait for (as in CUDA)
  Push({Item::Kind::kWait, nullptr, e, generation, 0, span});
}

void SimStream::Synchronize() { WaitServed(Enqueued()); }

uint64_t SimStream::Enqueued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_seq_;
}

void SimStream::WaitServed(uint64_t target) {
  // Invariant: braid never makes a kernel wait for its own stream (it would hang).
  CHECK(tls_stream != this) << "a kernel on " << device().ToString() << " stream " << index_
                            << " waits for its own stream";
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return served_ >= target; });
}

bool SimStream::Served(uint64_t target) const {
  std::lock_guard<std::mutex> lock(mu_);
  return served_ >= target;
}

void SimStream::Push(Item item) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    item.seq = next_seq_++;
    if (queue_.empty() && !serving_) last_progress_ns_.store(NowNanos(), std::memory_order_relaxed);
    queue_.push_back(item);
  }
  work_cv_.notify_one();
}

void SimStream::Serve() {
  tls_stream = this;
  CurrentDeviceScope on_device(device());
  FixedTensorsScope fixed;  // a kernel runs with the shapes and memory its launcher gave it
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    const Item item = queue_.front();
    queue_.pop_front();
    current_ = item;
    serving_ = true;
    serving_seq_.store(item.seq, std::memory_order_relaxed);
    const bool aborted = item.seq < abort_before_.load(std::memory_order_acquire);
    const Status why = aborted ? abort_status_ : Status();
    lock.unlock();
    last_progress_ns_.store(NowNanos(), std::memory_order_relaxed);
    Run(item, aborted, why);
    last_progress_ns_.store(NowNanos(), std::memory_order_relaxed);
    lock.lock();
    serving_ = false;
    kernel_wait_.clear();
    kernel_cv_ = nullptr;
    served_ = item.seq + 1;
    done_cv_.notify_all();
  }
}

void SimStream::Run(const Item& item, bool aborted, const Status& why) {
  switch (item.kind) {
    case Item::Kind::kKernel:
      if (aborted) {
        item.task->Abandon(why);
        return;
      }
      if (const int jitter = SimKernelJitterMicros(); jitter > 0) {
        thread_local std::minstd_rand rng(static_cast<unsigned>(index_) * 7919u + 17u);
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % (jitter + 1)));
      }
      item.task->Execute();
      return;
    case Item::Kind::kRecord:
      item.event->Complete(item.generation);  // even when aborted: waiters elsewhere go on
      return;
    case Item::Kind::kWait: {
      if (aborted) return;
      const int64_t start = NowNanos();
      item.event->WaitFor(item.generation, [&] {
        return item.seq < abort_before_.load(std::memory_order_acquire);
      });
      if (item.span != nullptr) {
        if (item.span->start_ns < 0) item.span->start_ns = start;
        item.span->end_ns = NowNanos();
      }
      return;
    }
  }
}

void SimStream::Abort(const Status& why) {
  std::lock_guard<std::mutex> lock(mu_);
  abort_status_ = why;
  abort_before_.store(next_seq_, std::memory_order_release);
}

void SimStream::WakeAborted() {
  std::lock_guard<std::mutex> lock(mu_);
  if (serving_ && current_.kind == Item::Kind::kWait) current_.event->Notify();
  if (kernel_cv_ != nullptr) kernel_cv_->notify_all();
}

bool SimStream::KernelAborted(Status* why) const {
  if (serving_seq_.load(std::memory_order_relaxed) >=
      abort_before_.load(std::memory_order_acquire)) {
    return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  *why = abort_status_;
  return true;
}

void SimStream::SetKernelWait(const std::string& what, std::condition_variable* cv) {
  std::lock_guard<std::mutex> lock(mu_);
  kernel_wait_ = what;
  kernel_cv_ = cv;
}

bool SimStream::busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return serving_ || !queue_.empty();
}

SimStream* SimStream::waiting_on() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!serving_ || current_.kind != Item::Kind::kWait) return nullptr;
  SimStream* recorder = nullptr;
  current_.event->latest(&recorder);
  return recorder;
}

std::string SimStream::DescribeItem(const Item& item) const {
  switch (item.kind) {
    case Item::Kind::kKernel:
      return item.task->Describe();
    case Item::Kind::kRecord:
      return "the record of the event of " + item.event->label();
    case Item::Kind::kWait: {
      SimStream* recorder = nullptr;
      item.event->latest(&recorder);
      std::string where = recorder == nullptr ? "" : " (recorded on " +
                                                         recorder->device().ToString() +
                                                         " stream " +
                                                         std::to_string(recorder->index()) + ")";
      return "a wait for the event of " + item.event->label() + where;
    }
  }
  return "?";
}

std::string SimStream::Describe() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string s = "stream " + std::to_string(index_) + ": ";
  if (!serving_) {
    s += queue_.empty() ? "idle" : "about to serve " + DescribeItem(queue_.front());
  } else if (current_.kind == Item::Kind::kKernel) {
    s += "runs " + current_.task->Describe();
    if (!kernel_wait_.empty()) s += ", which waits for " + kernel_wait_;
  } else {
    s += "serves " + DescribeItem(current_);
  }
  if (!queue_.empty()) {
    s += "; " + std::to_string(queue_.size()) + " more queued";
    for (const Item& next : queue_) {
      if (next.kind != Item::Kind::kKernel) continue;
      s += " (next kernel: " + next.task->Describe() + ")";
      break;
    }
  }
  return s;
}

}  // namespace braid
