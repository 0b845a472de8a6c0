// How one request may end early (installed as <braid/run_options.h>): a deadline and the caller's
// cancellation, taken by Predictor::Run and RunAsync (<braid/predictor.h>) and Session::RunNet
// (<braid/session.h>). The defaults: no deadline, not cancellable.
//
//   std::stop_source cancel;                  // cancel.request_stop() from any thread
//   braid::RunOptions options;
//   options.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
//   options.stop = cancel.get_token();
//
// A running request is checked before each op: once the deadline passes or the token is stopped
// no further op starts (the op running finishes; an op is never interrupted), and the call returns
// DeadlineExceeded or Cancelled naming the op it stopped before. OK means every op ran before the
// deadline and the stop.
//
// Thread safety: a value; the token may be stopped from any thread at any time.
#ifndef BRAID_RUN_OPTIONS_H_
#define BRAID_RUN_OPTIONS_H_

#include <chrono>
#include <stop_token>

namespace braid {

struct RunOptions {
  // When the answer is no longer wanted (time_point::max(): never).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // The caller's cancellation: request_stop() on its std::stop_source ends the request as the
  // deadline does, with Cancelled.
  std::stop_token stop;
};

}  // namespace braid

#endif  // BRAID_RUN_OPTIONS_H_
