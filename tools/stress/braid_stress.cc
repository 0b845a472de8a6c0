// braid_stress: random nets, memory-planned and run in parallel, checked bit for bit.
//
//   braid_stress [--seconds S] [--seed FIRST] [--nets N] [--devices D] [--sim-devices G]
//                [--max-workers W] [--iterations K] [--hang-seconds H] [--jitter-us J]
//
// For seeds FIRST, FIRST+1, ... until S seconds have passed (or N nets ran): builds a random net
// (tools/stress/random_net.h: branches, joins, in-place ops, Sum/Concat/Split, ops on D CPU
// devices and G simulated GPUs with copies between them), plans it for the dag executor with a
// random worker count in [1, W], poisons every arena region handed to a new blob with NaN, runs it
// K times and compares each run's outputs with the unplanned simple executor's, bit for bit
// (tools/stress/stress_run.h). Sim kernels start after random delays of up to J microseconds, so
// streams interleave differently every run. Prints one line per failing net with the seed that
// reproduces it, then a summary:
//
//   nets 116  iterations 348  mismatches 0  hangs 0  errors 0  arena/naive 0.80
//   most ops at once 2  most threads 24 (workers up to 8)  seeds 1..116  seconds 10.1
//
// "most ops at once": the most ops of one net whose start-to-end spans overlapped in a run (host
// ops and sim kernels); "most threads": the most threads (dag workers, sim stream threads) that
// ran one net's ops in a run. On a machine of few cores, short ops seldom overlap beyond the cores
// (and ops that could oversubscribe them take turns at core tokens,
// runtime/exec/intra_op_threads.h), while the threads show that every worker count ran.
//
// Exit codes: 0 all nets matched, 1 a mismatch, hang or error, 2 bad flags.
#include <gflags/gflags.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "runtime/device/sim/sim_device.h"
#include "tools/command_line.h"
#include "tools/stress/random_net.h"
#include "tools/stress/stress_run.h"

DEFINE_double(seconds, 10, "stop starting new nets after this many seconds");
DEFINE_uint64(seed, 1, "seed of the first net; net i uses seed + i");
DEFINE_int32(nets, 0, "stop after this many nets (0: only --seconds bounds the run)");
DEFINE_int32(devices, 2, "CPU devices the ops are spread over");
DEFINE_int32(sim_devices, 2, "simulated GPUs (sim:0, ...) the ops are spread over too");
DEFINE_int32(jitter_us, 50, "sim kernels start after a random delay of up to this (microseconds)");
DEFINE_int32(max_workers, 8, "the dag executor runs with 1..max-workers workers");
DEFINE_int32(iterations, 3, "planned runs per net");
DEFINE_double(hang_seconds, 60, "a run taking longer counts as a hang");

namespace braid {
namespace {

struct Totals {
  int nets = 0, iterations = 0, mismatches = 0, hangs = 0, errors = 0;
  int64_t arena = 0, naive = 0;
  int most_at_once = 0;   // the most ops of one net seen running at once
  int most_threads = 0;   // the most threads that ran one net's ops in one run
  int most_workers = 0;   // the largest worker count drawn
};

void RunOne(uint64_t seed, Totals* totals) {
  std::mt19937_64 rng(seed);
  RandomNetOptions options;
  options.num_inputs = 2 + static_cast<int>(rng() % 4);
  options.num_ops = 10 + static_cast<int>(rng() % 120);
  options.blob_size = 1 << (rng() % 12);
  options.concat_split = true;
  options.num_devices = FLAGS_devices;
  options.num_sim_devices = FLAGS_sim_devices;
  options.all_outputs = false;
  const int workers = 1 + static_cast<int>(rng() % FLAGS_max_workers);
  StressResult r =
      RunStressCase(RandomNet(seed, options), workers, FLAGS_iterations, FLAGS_hang_seconds);
  ++totals->nets;
  totals->iterations += r.iterations;
  totals->mismatches += r.mismatches;
  totals->hangs += r.hang;
  totals->errors += !r.error.empty();
  totals->arena += r.arena_bytes;
  totals->naive += r.naive_bytes;
  totals->most_at_once = std::max(totals->most_at_once, r.most_ops_at_once);
  totals->most_threads = std::max(totals->most_threads, r.most_threads);
  totals->most_workers = std::max(totals->most_workers, workers);
  if (r.mismatches || r.hang || !r.error.empty()) {
    std::printf(
        "FAIL seed %llu (%d ops, %d workers): %d mismatches%s %s\n  reproduce: "
        "braid_stress --seed %llu --nets 1 --devices %d --sim-devices %d --max-workers %d\n",
        static_cast<unsigned long long>(seed), options.num_ops, workers, r.mismatches,
        r.hang ? ", hang" : "", r.error.c_str(), static_cast<unsigned long long>(seed),
        FLAGS_devices, FLAGS_sim_devices, FLAGS_max_workers);
  }
}

}  // namespace
}  // namespace braid

int main(int argc, char** argv) {
  braid::ParseCommandLine(argc, argv, "braid_stress [--seconds S] [--seed FIRST] [--nets N]");
  if (FLAGS_devices < 1 || FLAGS_max_workers < 1 || FLAGS_iterations < 1 ||
      FLAGS_sim_devices < 0 || FLAGS_jitter_us < 0) {
    std::fprintf(stderr,
                 "braid_stress: --devices, --max-workers and --iterations must be >= 1, "
                 "--sim-devices and --jitter-us >= 0\n");
    return braid::kExitBadFlags;
  }
  braid::SimDeviceOptions sim = braid::GetSimDeviceOptions();
  sim.kernel_jitter_us = FLAGS_jitter_us;
  braid::SetSimDeviceOptions(sim);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  braid::Totals totals;
  for (uint64_t seed = FLAGS_seed; elapsed() < FLAGS_seconds; ++seed) {
    if (FLAGS_nets > 0 && totals.nets >= FLAGS_nets) break;
    braid::RunOne(seed, &totals);
  }
  std::printf(
      "nets %d  iterations %d  mismatches %d  hangs %d  errors %d  arena/naive %.2f  "
      "most ops at once %d  most threads %d (workers up to %d)  seeds %llu..%llu  seconds %.1f\n",
      totals.nets, totals.iterations, totals.mismatches, totals.hangs, totals.errors,
      totals.naive ? static_cast<double>(totals.arena) / totals.naive : 1.0, totals.most_at_once,
      totals.most_threads, totals.most_workers,
      static_cast<unsigned long long>(FLAGS_seed),
      static_cast<unsigned long long>(FLAGS_seed + totals.nets - 1), elapsed());
  std::fflush(stdout);
  const bool ok = totals.mismatches == 0 && totals.hangs == 0 && totals.errors == 0;
  if (totals.hangs > 0) std::_Exit(1);  // a hung run's thread cannot be joined
  return ok ? 0 : 1;
}
