// ContextPool: a Predictor's request contexts (runtime/serve/predictor_context.h) and the requests
// waiting for one, synchronous (Run: the caller's thread waits) and asynchronous (RunAsync: a
// queue served by the pool's own threads).
//
// At most `size` contexts exist (made when first needed); a request runs in one it borrowed and
// returns it. A waiting request ends without running when its RunStop fires (its deadline passes:
// DeadlineExceeded; its token is stopped: Cancelled), at that moment: a synchronous one waits with
// wait_until on context_freed_, which a returned context and its stop notify; asynchronous ones
// are watched by the pool's threads, of which there are size + 1, so that one is always free to
// wake at the earliest deadline in the queue while `size` run. Each returned context wakes one
// synchronous waiter and one thread (never all: with many waiters that would cost a wake-up each
// per request); a waiter that leaves without the free context it was woken for wakes the next.
// Asynchronous requests start in the order they came (FIFO); a synchronous one and the queue's
// first take whichever context comes free first, in no promised order.
//
//   ContextPool pool(&parameters, &spec, /*size=*/4, "predictor 'p'");
//   pool.Run(inputs, writers, stop, deliver);                    // throws braid::Error
//   std::future<RunResult> result = pool.RunAsync(inputs, std::move(writers), stop);
//
// Thread safety: Run, RunAsync and AddMemory from any number of threads. Everything shared is
// guarded by mu_: the contexts, the idle list, the queue, the threads, closing_. A context is used
// by one request at a time (the one that borrowed it), outside mu_. The destructor must not
// overlap another call: it ends every queued request with Cancelled (never run), waits for the
// running ones to finish (their futures get their results) and joins the threads. Futures may
// outlive the pool.
#ifndef BRAID_RUNTIME_SERVE_CONTEXT_POOL_H_
#define BRAID_RUNTIME_SERVE_CONTEXT_POOL_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "braid/predictor.h"
#include "runtime/exec/run_stop.h"
#include "runtime/serve/predictor_context.h"

namespace braid {

class ContextPool {
 public:
  // `parameters` and `spec` must outlive the pool; `label` names it in errors.
  ContextPool(const Workspace* parameters, const PredictorSpec* spec, int size, std::string label);
  ~ContextPool();
  ContextPool(const ContextPool&) = delete;
  ContextPool& operator=(const ContextPool&) = delete;

  // Waits for `writers` and then for a context (until `stop` fires: Error DeadlineExceeded or
  // Cancelled, not run), runs
  // the request in it (PredictorContext::Run, handing the outputs to `deliver`) and returns it.
  // Throws braid::Error.
  void Run(const std::map<std::string, InputView>& inputs, const StreamMarks& writers,
           const RunStop& stop, const OutputSink& deliver);
  // Queues the request for the pool's threads (started by the first call), whose result gets
  // every output copied to the host. The thread that runs it waits for `writers` in the context
  // it took (within the request's stop). The inputs' memory must stay valid and unchanged until the
  // future is ready.
  std::future<RunResult> RunAsync(std::map<std::string, InputView> inputs, StreamMarks writers,
                                  RunStop stop);

  // Adds the contexts' counts and bytes to *memory.
  void AddMemory(PredictorMemory* memory) const;

 private:
  struct Queued;  // an asynchronous request waiting in queue_
  using StopWake = std::stop_callback<std::function<void()>>;

  bool CanLendLocked() const;
  PredictorContext* LendLocked();  // CanLendLocked() must hold
  void Return(PredictorContext* context);
  // Why a waiting request ends now without running: Cancelled or DeadlineExceeded, else OK.
  Status WaitEnded(const RunStop& stop) const;
  // One of the pool's threads: ends the queued requests whose stop fired, runs the queue's first
  // when a context is free, else sleeps until a change or the queue's earliest deadline.
  void Serve();
  // Removes from the queue the requests whose stop fired, with why: a scan of the queue, made only
  // when a queued token was stopped or the earliest queued deadline has passed (so serving a deep
  // queue costs no scan per request).
  std::vector<std::pair<std::unique_ptr<Queued>, Status>> TakeEndedLocked();
  void ForgetDeadlineLocked(const Queued& request);  // the request leaves the queue
  std::chrono::steady_clock::time_point EarliestDeadlineLocked() const;
  void RunQueued(std::unique_ptr<Queued> request, PredictorContext* context);

  const Workspace* const parameters_;
  const PredictorSpec* const spec_;
  const int size_;
  const std::string label_;

  mutable std::mutex mu_;
  // Synchronous waiters: notified (one) when a context returns or a waiter leaves one free.
  std::condition_variable_any context_freed_;
  // The pool's threads: notified (one) when a context returns or a request is queued, (all) when
  // a queued request is cancelled (with mu_ taken and released first, so no thread misses it)
  // and when the pool closes.
  std::condition_variable_any queue_changed_;
  std::vector<std::unique_ptr<PredictorContext>> contexts_;  // guarded by mu_
  std::vector<PredictorContext*> idle_;                      // guarded by mu_
  std::deque<std::unique_ptr<Queued>> queue_;                // guarded by mu_
  // The queued requests' deadlines (those that have one), earliest first.
  std::multiset<std::chrono::steady_clock::time_point> deadlines_;  // guarded by mu_
  bool stop_requested_ = false;  // guarded by mu_: a queued token stopped since the last scan
  std::vector<std::thread> threads_;                         // guarded by mu_
  bool closing_ = false;                                     // guarded by mu_
};

}  // namespace braid

#endif  // BRAID_RUNTIME_SERVE_CONTEXT_POOL_H_
