// One stress case: a random net run planned on the dag executor against its unplanned simple run.
//
// The reference runs `net` unplanned with the simple executor. The case then builds the same net
// for the dag executor with `workers` workers, plans its memory (verified; freed arena regions
// poisoned with NaN whenever a new blob takes them) and runs it `iterations` times, comparing every
// external output with the reference bit for bit after each run. A run that does not finish within
// `hang_seconds` counts as a hang. It also reports, from the runs' op events, the most ops seen
// running at once and the most threads that ran ops in one run: the concurrency the case reached,
// which worker counts alone do not show.
//
//   StressResult r = RunStressCase(RandomNet(seed, options), /*workers=*/4, /*iterations=*/3, 30);
//
// Thread-safe: each case uses its own workspaces.
#ifndef BRAID_TOOLS_STRESS_STRESS_RUN_H_
#define BRAID_TOOLS_STRESS_STRESS_RUN_H_

#include <cstdint>
#include <string>

#include "proto/braid.pb.h"

namespace braid {

struct StressResult {
  int iterations = 0;       // planned runs completed
  int mismatches = 0;       // runs whose outputs differed from the reference
  bool hang = false;        // a run exceeded hang_seconds (the case was abandoned)
  std::string error;        // a failure (build, plan, verification, run); empty if none
  int64_t arena_bytes = 0;  // planned
  int64_t naive_bytes = 0;
  int most_ops_at_once = 0;  // the most of its ops seen running at once in a planned run
  int most_threads = 0;      // the most threads (workers, stream threads) that ran its ops in one
};

StressResult RunStressCase(const NetDef& net, int workers, int iterations, double hang_seconds);

}  // namespace braid

#endif  // BRAID_TOOLS_STRESS_STRESS_RUN_H_
