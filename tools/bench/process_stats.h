// What the benchmarks measure of their own process and their samples: /proc/self/status fields
// and nearest-rank quantiles.
//
//   int64_t peak = ProcStatusBytes("VmHWM:");   // 0 when the field is missing
//   double p99 = Quantile(latencies_ms, 0.99);  // 0 for no samples
//
// Pure functions apart from reading /proc; thread-safe.
#ifndef BRAID_TOOLS_BENCH_PROCESS_STATS_H_
#define BRAID_TOOLS_BENCH_PROCESS_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace braid {

// A "VmRSS:"-style field of /proc/self/status, in bytes.
int64_t ProcStatusBytes(const std::string& field);

// The value at fraction q (0..1) of the sorted `values`, nearest rank.
double Quantile(std::vector<double> values, double q);

}  // namespace braid

#endif  // BRAID_TOOLS_BENCH_PROCESS_STATS_H_
