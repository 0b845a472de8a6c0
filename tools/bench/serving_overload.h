// Open-loop load for braid_bench_serving's deadline rows: requests arrive at a fixed rate, whether
// or not earlier ones were answered (as a server's clients send them), and each may carry a
// deadline `deadline_ms` after its arrival (include/braid/predictor.h RunOptions).
//
//   OverloadRow row;
//   DriveOpenLoop(*predictor, /*rate=*/150, /*seconds=*/2, /*deadline_ms=*/50, inputs, &row);
//   row.latencies_ms;  // arrival to answer, every request; row.ok, row.deadline_exceeded
//
// A dispatcher thread releases request k at start + k / rate to a pool of client threads that
// call Predictor::Run; a request that finds every client thread busy waits in the pool's queue,
// and its latency (and its deadline) count from its arrival, so the pool adds no hidden queue.
// Thread safety: DriveOpenLoop may run while nothing else uses `predictor`'s contexts.
#ifndef BRAID_TOOLS_BENCH_SERVING_OVERLOAD_H_
#define BRAID_TOOLS_BENCH_SERVING_OVERLOAD_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "braid/predictor.h"

namespace braid {

// One row's requests over all its rounds.
struct OverloadRow {
  std::vector<double> latencies_ms;  // arrival to answer, every request
  int64_t ok = 0;                    // answered (with a deadline: every op ran before it)
  int64_t ok_within_ms = 0;          // answered within the deadline_ms of the row being compared
  int64_t deadline_exceeded = 0;     // DeadlineExceeded (waited, or stopped between ops)
  int64_t sent = 0;
  double seconds = 0;  // from the first arrival to the last answer
};

// Sends requests at `rate` per second for `seconds` (then waits for every answer), each with a
// deadline `deadline_ms` after its arrival when `with_deadline`; `inputs[k % inputs.size()]` is
// request k's. Counts into *row; ok_within_ms counts OK answers within `deadline_ms` in either
// case. Throws braid::Error for any other Status.
void DriveOpenLoop(const Predictor& predictor, double rate, double seconds, double deadline_ms,
                   bool with_deadline, const std::vector<std::map<std::string, InputView>>& inputs,
                   OverloadRow* row);

}  // namespace braid

#endif  // BRAID_TOOLS_BENCH_SERVING_OVERLOAD_H_
