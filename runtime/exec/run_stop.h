// RunStop: what may end one Run of a net early, its deadline and its caller's cancellation. The
// executors check it before each op they run or launch (Net::StopBeforeOp, runtime/exec/net.h):
// once it fires, no further op of that Run starts; ops already running (and kernels already
// launched on a device stream) finish, and the Run returns DeadlineExceeded or Cancelled naming
// the op it stopped before.
//
//   std::stop_source source;
//   RunStop stop{std::chrono::steady_clock::now() + std::chrono::milliseconds(20),
//                source.get_token()};
//   Status s = net->Run(stop);   // another thread may call source.request_stop()
//
// Thread safety: a value; Fired and Why may be called from any number of threads at once
// (stop_token's reads are atomic).
#ifndef BRAID_RUNTIME_EXEC_RUN_STOP_H_
#define BRAID_RUNTIME_EXEC_RUN_STOP_H_

#include <chrono>
#include <stop_token>
#include <string>

#include "braid/status.h"

namespace braid {

struct RunStop {
  // No deadline: time_point::max().
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // A default-constructed token can never be stopped.
  std::stop_token stop;

  // Whether it can ever fire (else checking it is pointless).
  bool can_fire() const {
    return deadline != std::chrono::steady_clock::time_point::max() || stop.stop_possible();
  }
  // Whether it has fired: the token was stopped or the deadline has passed (one clock read when
  // there is a deadline; no allocation).
  bool Fired() const {
    return stop.stop_requested() || (deadline != std::chrono::steady_clock::time_point::max() &&
                                     std::chrono::steady_clock::now() >= deadline);
  }
  // Why it fired (call once Fired()): Cancelled when the token was stopped, else
  // DeadlineExceeded saying how long ago the deadline passed, the message starting with `where`
  // ("stopped before net 'n' op #3 (Relu 'r')").
  Status Why(const std::string& where) const;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_RUN_STOP_H_
