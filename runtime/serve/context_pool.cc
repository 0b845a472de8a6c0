#include "runtime/serve/context_pool.h"

#include <utility>

#include "runtime/serve/tensor_views.h"

namespace braid {

namespace {
constexpr auto kNoDeadline = std::chrono::steady_clock::time_point::max();
}  // namespace

struct ContextPool::Queued {
  std::map<std::string, InputView> inputs;
  StreamMarks writers;
  RunStop stop;
  std::promise<RunResult> promise;
  // Wakes the pool's threads when the caller cancels. Destroyed outside mu_: its destructor waits
  // for a callback that may be waiting for mu_.
  std::unique_ptr<StopWake> wake;
};

ContextPool::ContextPool(const Workspace* parameters, const PredictorSpec* spec, int size,
                         std::string label)
    : parameters_(parameters), spec_(spec), size_(size), label_(std::move(label)) {}

ContextPool::~ContextPool() {
  std::deque<std::unique_ptr<Queued>> never_run;
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
    never_run.swap(queue_);
    deadlines_.clear();
    threads.swap(threads_);
  }
  queue_changed_.notify_all();
  for (const auto& request : never_run) {
    request->promise.set_value(
        RunResult{Status::Cancelled(label_ + ": the predictor was destroyed before the request "
                                             "ran"),
                  {}});
  }
  never_run.clear();
  for (std::thread& thread : threads) thread.join();  // the running requests finish first
}

bool ContextPool::CanLendLocked() const {
  return !idle_.empty() || static_cast<int>(contexts_.size()) < size_;
}

PredictorContext* ContextPool::LendLocked() {
  if (!idle_.empty()) {
    PredictorContext* context = idle_.back();
    idle_.pop_back();
    return context;
  }
  idle_.reserve(contexts_.size() + 1);  // so that Return, which must not throw, never allocates
  contexts_.push_back(std::make_unique<PredictorContext>(parameters_, spec_));
  return contexts_.back().get();
}

void ContextPool::Return(PredictorContext* context) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(context);
  }
  context_freed_.notify_one();
  queue_changed_.notify_one();
}

Status ContextPool::WaitEnded(const RunStop& stop) const {
  if (!stop.Fired()) return Status::OK();
  return stop.Why(label_ + ": waited for one of its " + std::to_string(size_) +
                  " request contexts, and did not run");
}

void ContextPool::Run(const std::map<std::string, InputView>& inputs, const StreamMarks& writers,
                      const RunStop& stop, const OutputSink& deliver) {
  WaitForWriters(writers, stop, label_);  // before a context is taken: none waits idle for them
  PredictorContext* context = nullptr;
  {
    std::unique_lock<std::mutex> lock(mu_);
    const auto free = [this] { return CanLendLocked(); };
    // Both waits return when a context is free or the token is stopped (condition_variable_any
    // registers a stop_callback that notifies), wait_until also at the deadline.
    if (stop.deadline == kNoDeadline) {
      context_freed_.wait(lock, stop.stop, free);
    } else {
      context_freed_.wait_until(lock, stop.stop, stop.deadline, free);
    }
    const Status ended = WaitEnded(stop);  // a stop that fired wins over a free context
    if (!ended.ok()) {
      if (CanLendLocked()) context_freed_.notify_one();  // the wake-up it may have been given
      throw Error(ended);
    }
    context = LendLocked();
  }
  struct Returned {  // the context goes back to the pool however the request ends
    ContextPool* pool;
    PredictorContext* context;
    ~Returned() { pool->Return(context); }
  } returned{this, context};
  context->Run(inputs, writers, stop, deliver);
}

std::future<RunResult> ContextPool::RunAsync(std::map<std::string, InputView> inputs,
                                             StreamMarks writers, RunStop stop) {
  auto request = std::make_unique<Queued>();
  request->inputs = std::move(inputs);
  request->writers = std::move(writers);
  request->stop = std::move(stop);
  std::future<RunResult> result = request->promise.get_future();
  const Status ended = WaitEnded(request->stop);
  if (!ended.ok()) {
    request->promise.set_value(RunResult{ended, {}});
    return result;
  }
  if (request->stop.stop.stop_possible()) {
    // Taking mu_ before notifying orders the stop after a thread's look at the queue, or before
    // its wait: no thread misses it. (Made before mu_ is taken: a token already stopped calls
    // it here.)
    request->wake = std::make_unique<StopWake>(request->stop.stop, std::function<void()>([this] {
                                                 {
                                                   std::lock_guard<std::mutex> lock(mu_);
                                                   stop_requested_ = true;
                                                 }
                                                 queue_changed_.notify_all();
                                               }));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    // size_ + 1 threads: while size_ of them run requests, one watches the queue's deadlines.
    while (static_cast<int>(threads_.size()) < size_ + 1) {
      threads_.emplace_back([this] { Serve(); });
    }
    if (request->stop.deadline != kNoDeadline) deadlines_.insert(request->stop.deadline);
    // A stop that came between WaitEnded above and the wake's registration is not missed.
    if (request->stop.stop.stop_requested()) stop_requested_ = true;
    queue_.push_back(std::move(request));
  }
  queue_changed_.notify_one();
  return result;
}

std::vector<std::pair<std::unique_ptr<ContextPool::Queued>, Status>>
ContextPool::TakeEndedLocked() {
  std::vector<std::pair<std::unique_ptr<Queued>, Status>> ended;
  const bool deadline_passed =
      !deadlines_.empty() && std::chrono::steady_clock::now() >= *deadlines_.begin();
  if (!stop_requested_ && !deadline_passed) return ended;  // nothing can have ended
  stop_requested_ = false;
  for (auto it = queue_.begin(); it != queue_.end();) {
    Status why = WaitEnded((*it)->stop);
    if (why.ok()) {
      ++it;
      continue;
    }
    ForgetDeadlineLocked(**it);
    ended.emplace_back(std::move(*it), std::move(why));
    it = queue_.erase(it);
  }
  return ended;
}

void ContextPool::ForgetDeadlineLocked(const Queued& request) {
  if (request.stop.deadline == kNoDeadline) return;
  deadlines_.erase(deadlines_.find(request.stop.deadline));
}

std::chrono::steady_clock::time_point ContextPool::EarliestDeadlineLocked() const {
  return deadlines_.empty() ? kNoDeadline : *deadlines_.begin();
}

void ContextPool::Serve() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    auto ended = TakeEndedLocked();
    if (!ended.empty()) {
      lock.unlock();
      for (auto& [request, why] : ended) request->promise.set_value(RunResult{why, {}});
      ended.clear();  // outside mu_ (Queued::wake)
      lock.lock();
      continue;
    }
    if (!queue_.empty() && CanLendLocked()) {
      std::unique_ptr<Queued> request = std::move(queue_.front());
      queue_.pop_front();
      ForgetDeadlineLocked(*request);
      PredictorContext* context = LendLocked();
      lock.unlock();
      RunQueued(std::move(request), context);
      lock.lock();
      continue;
    }
    if (closing_) return;  // the destructor emptied the queue
    const auto deadline = EarliestDeadlineLocked();
    if (deadline == kNoDeadline) {
      queue_changed_.wait(lock);
    } else {
      queue_changed_.wait_until(lock, deadline);
    }
  }
}

void ContextPool::RunQueued(std::unique_ptr<Queued> request, PredictorContext* context) {
  RunResult result;
  result.status = StatusFromCall([&] {
    struct Returned {
      ContextPool* pool;
      PredictorContext* context;
      ~Returned() { pool->Return(context); }
    } returned{this, context};
    const Status ended = WaitEnded(request->stop);  // it may have fired since the queue was read
    if (!ended.ok()) throw Error(ended);
    context->Run(request->inputs, request->writers, request->stop, [&](const OutputValues& values) {
      for (const auto& [name, value] : values) CopyOut(*value, &result.outputs[name]);
    });
  });
  if (!result.status.ok()) result.outputs.clear();
  request->promise.set_value(std::move(result));
}

void ContextPool::AddMemory(PredictorMemory* memory) const {
  std::lock_guard<std::mutex> lock(mu_);
  memory->contexts += static_cast<int>(contexts_.size());
  for (const auto& context : contexts_) {
    memory->plans += context->plans();
    memory->built_nets += context->built_nets();
    memory->arena_bytes += context->arena_bytes();
    memory->lower_bound_bytes += context->lower_bound_bytes();
    memory->scratch_bytes += context->scratch_bytes();
  }
}

}  // namespace braid
