// braid_bench_allocator: what the CachingAllocator (runtime/device/caching_allocator.h) saves over
// raw device allocation, and what it costs in memory as a training job's batch grows.
//
// 1. Allocate+Free pairs. For each size (--sizes) and thread count (--threads), the ns of one
//    Allocate+Free pair through a CachingAllocator over sim:0, already warmed so that every timed
//    request is a cache hit (checked: no raw call while timed); through a no-cache allocator that
//    makes one raw call each (RawAllocate+RawFree on sim:0: the driver lock, draining the device
//    and filling fresh memory with 0xFF, as cudaMalloc synchronises; tools/bench/
//    raw_device_allocator.h); and through the host's CpuAllocator() (aligned_alloc). With T
//    threads, T threads run pairs on the same allocator at once and ns/op is each thread's time per
//    pair: flat against 1 thread means no contention, T times it means the allocator's mutex
//    serialises them (on a machine with fewer cores than T, the cores do too). Each case is timed
//    in batches grown until one lasts --min_time_ms; --rounds rounds alternate the allocators'
//    order and each case keeps its best. Columns: the three ns/op, raw/caching, cpu/caching, and
//    caching's ns/op against its own 1-thread row. A raw call on sim costs what the host charges
//    for aligned_alloc, touching every page (0xFF) and free, so raw ns/op of large sizes moves with
//    the host's page faults and glibc's per-thread arenas; it is no model of cudaMalloc's latency.
// 2. Fragmentation. The Allocate/Free trace of a ResNet-like training job
//    (tools/bench/allocation_trace.h: small statistics and weights beside large activations and
//    workspaces, freed in other orders than allocated, lifetimes overlapping across steps), --steps
//    steps at each batch of --batches in turn, replayed against one CachingAllocator (sim:0) that
//    lives through all phases, and against the no-cache allocator (sim:1, one raw call per
//    Allocate and Free), alternating per phase. Per phase: the peak of requested bytes in use;
//    bytes reserved from the device at its end and reserved/peak; mid-step (after the last step's
//    forward pass, activations live) and at its end, the cached bytes, the largest cached block and
//    fragmentation() (1 - largest free block / cached bytes); the raw allocations and frees of
//    both, their ratio, and ms per step of both.
//
//   braid_bench_allocator                     # both sections, < 30 s
//   braid_bench_allocator --rounds=5 --min_time_ms=50 --sizes=512,2M --threads=1,2,4,8
//   braid_bench_allocator --batches=16,128,16 --steps=5 --sections=fragmentation --json
//
// --json prints both sections as one JSON object instead of the tables ("pairs": ns per pair;
// "phases": per phase counts, and the caching allocator's stats mid-step and at the end, whose
// raw_allocations and raw_frees count from its construction).
//
// Only ratios from one run mean anything. Not part of ctest. Exit codes: 0, 1 a failure, 2 bad
// flags.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "braid/status.h"
#include "runtime/core/allocator.h"
#include "runtime/device/caching_allocator.h"
#include "runtime/device/sim/sim_device.h"
#include "tools/bench/allocation_trace.h"
#include "tools/bench/raw_device_allocator.h"
#include "tools/command_line.h"

DEFINE_string(sections, "pairs,fragmentation", "which sections to run: pairs, fragmentation");
DEFINE_string(sizes, "256,64K,1M,8M,64M", "request sizes of the Allocate+Free pairs");
DEFINE_string(threads, "1,2,4", "thread counts of the Allocate+Free pairs");
DEFINE_int32(rounds, 3, "rounds of the Allocate+Free pairs; each case keeps its best");
DEFINE_int32(min_time_ms, 20, "each timed batch of pairs lasts at least this long");
DEFINE_string(batches, "8,16,32,64,128", "batch sizes of the fragmentation phases, in order");
DEFINE_int32(steps, 3, "training steps per fragmentation phase");
DEFINE_bool(json, false, "print the results as JSON instead of tables");

namespace braid::bench {
namespace {

enum Kind { kCaching, kRaw, kCpu, kKinds };
const char* const kKindNames[kKinds] = {"caching", "raw", "cpu"};

struct PairTiming {
  int64_t bytes = 0;
  int threads = 0;
  double ns[kKinds] = {0, 0, 0};  // per pair per thread
};

struct PhaseRow {
  int batch = 0;
  PhaseResult caching{}, raw{};
  int64_t caching_raw_allocs = 0, caching_raw_frees = 0, raw_allocs = 0, raw_frees = 0;
};

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// The positive numbers of a comma-separated flag ("64K" style sizes too); throws an
// InvalidArgument naming the tool (exit code 2) otherwise.
std::vector<int> PositiveInts(const std::string& list, const std::string& flag) {
  std::vector<int> values;
  for (const std::string& item : SplitList(list)) {
    int64_t value = 0;
    try {
      value = ParseByteSize(item, flag);
    } catch (const Error&) {
    }
    if (value <= 0 || value > (int64_t{1} << 30)) {
      throw Error(Status::InvalidArgument("braid_bench_allocator: --" + flag + " wants numbers" +
                                          " from 1 to 1G (64K style), got '" + item + "'"));
    }
    values.push_back(static_cast<int>(value));
  }
  if (values.empty()) {
    throw Error(Status::InvalidArgument("braid_bench_allocator: --" + flag + " is empty"));
  }
  return values;
}

bool SectionOn(const std::string& name) {
  const std::vector<std::string> sections = SplitList(FLAGS_sections);
  return std::find(sections.begin(), sections.end(), name) != sections.end();
}

// `threads` threads each run `pairs` Allocate+Free pairs of `bytes` on `a`; returns the wall
// seconds from their common start until the last is done (threads are made before the start).
double RunPairs(Allocator* a, size_t bytes, int threads, int64_t pairs) {
  auto body = [a, bytes, pairs] {
    for (int64_t i = 0; i < pairs; ++i) a->Free(a->Allocate(bytes), bytes);
  };
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) {
    workers.emplace_back([&] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      body();
    });
  }
  while (ready.load() < threads - 1) std::this_thread::yield();
  const auto start = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  body();
  for (std::thread& w : workers) w.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ns per pair per thread, from a batch of pairs grown until it lasts --min_time_ms.
double NsPerPair(Allocator* a, size_t bytes, int threads) {
  const double min_seconds = FLAGS_min_time_ms / 1e3;
  for (int64_t pairs = 1;;) {
    const double seconds = RunPairs(a, bytes, threads, pairs);
    if (seconds >= min_seconds || pairs >= (int64_t{1} << 32)) return seconds * 1e9 / pairs;
    const double grow = seconds > 0 ? 1.4 * min_seconds / seconds : 100;
    pairs = std::max(pairs * 2, std::min(pairs * 100, static_cast<int64_t>(pairs * grow)));
  }
}

// Makes `threads` blocks of `bytes` at once and frees them, so that as many concurrent requests
// are cache hits.
void WarmCache(CachingAllocator* a, size_t bytes, int threads) {
  std::vector<void*> blocks;
  for (int t = 0; t < threads; ++t) blocks.push_back(a->Allocate(bytes));
  for (void* p : blocks) a->Free(p, bytes);
}

double TimeCase(Kind kind, Allocator* a, size_t bytes, int threads) {
  auto* caching = kind == kCaching ? static_cast<CachingAllocator*>(a) : nullptr;
  if (caching != nullptr) WarmCache(caching, bytes, threads);
  const int64_t raw_before = a->stats().raw_allocations;
  const double ns = NsPerPair(a, bytes, threads);
  if (caching != nullptr) {
    // Invariant: a warmed caching allocator serves the benchmark's pairs from its cache.
    CHECK_EQ(a->stats().raw_allocations, raw_before)
        << "a timed pair of " << bytes << " bytes on " << threads << " threads missed the cache";
  }
  return ns;
}

std::vector<PairTiming> MeasurePairs() {
  CachingAllocator caching(SimDevice::Get(0));
  RawDeviceAllocator raw(SimDevice::Get(0));
  Allocator* allocators[kKinds] = {&caching, &raw, CpuAllocator()};
  std::vector<PairTiming> rows;
  for (int threads : PositiveInts(FLAGS_threads, "threads")) {
    for (int bytes : PositiveInts(FLAGS_sizes, "sizes")) rows.push_back({bytes, threads, {}});
  }
  for (int round = 0; round < FLAGS_rounds; ++round) {
    for (PairTiming& row : rows) {
      for (int k = 0; k < kKinds; ++k) {
        const auto kind = static_cast<Kind>((k + round) % kKinds);  // each goes first in turn
        const double ns =
            TimeCase(kind, allocators[kind], static_cast<size_t>(row.bytes), row.threads);
        if (round == 0 || ns < row.ns[kind]) row.ns[kind] = ns;
      }
    }
    std::fprintf(stderr, "  pairs: round %d of %d done\n", round + 1, FLAGS_rounds);
  }
  return rows;
}

void PrintPairs(const std::vector<PairTiming>& rows) {
  std::printf(
      "\nAllocate+Free pair, ns per pair per thread (best of %d rounds, batches >= %d ms)\n",
      FLAGS_rounds, FLAGS_min_time_ms);
  std::printf(
      "caching: CachingAllocator over sim:0, cache hits; raw: RawAllocate+RawFree on sim:0;"
      " cpu: CpuAllocator()\n");
  std::printf("%-10s %7s %12s %12s %12s %12s %12s %14s\n", "size", "threads", "caching ns",
              "raw ns", "cpu ns", "raw/caching", "cpu/caching", "caching/1-thr");
  for (const PairTiming& r : rows) {
    double one_thread = 0;
    for (const PairTiming& o : rows) {
      if (o.bytes == r.bytes && o.threads == 1) one_thread = o.ns[kCaching];
    }
    char vs_one[32] = "-";
    if (one_thread > 0) std::snprintf(vs_one, sizeof(vs_one), "%.2f", r.ns[kCaching] / one_thread);
    std::printf("%-10s %7d %12.1f %12.1f %12.1f %12.1f %12.2f %14s\n", HumanBytes(r.bytes).c_str(),
                r.threads, r.ns[kCaching], r.ns[kRaw], r.ns[kCpu], r.ns[kRaw] / r.ns[kCaching],
                r.ns[kCpu] / r.ns[kCaching], vs_one);
  }
}

std::vector<PhaseRow> RunFragmentation() {
  CachingAllocator caching(SimDevice::Get(0));
  RawDeviceAllocator raw(SimDevice::Get(1));
  TraceReplayer caching_replay(&caching), raw_replay(&raw);
  ResNetLikeTrace trace;
  const std::vector<TraceOp> setup = trace.Setup();
  caching_replay.Run(setup);
  raw_replay.Run(setup);
  std::vector<PhaseRow> rows;
  AllocatorStats caching_before = caching.stats(), raw_before = raw.stats();
  for (int batch : PositiveInts(FLAGS_batches, "batches")) {
    const std::vector<TraceOp> phase = trace.Phase(batch, FLAGS_steps);
    PhaseRow row{.batch = batch};
    const bool caching_first = rows.size() % 2 == 0;  // alternate which replays first
    if (!caching_first) row.raw = raw_replay.Run(phase);
    row.caching = caching_replay.Run(phase);
    if (caching_first) row.raw = raw_replay.Run(phase);
    row.caching_raw_allocs = row.caching.end.raw_allocations - caching_before.raw_allocations;
    row.caching_raw_frees = row.caching.end.raw_frees - caching_before.raw_frees;
    row.raw_allocs = row.raw.end.raw_allocations - raw_before.raw_allocations;
    row.raw_frees = row.raw.end.raw_frees - raw_before.raw_frees;
    caching_before = row.caching.end;
    raw_before = row.raw.end;
    rows.push_back(row);
    std::fprintf(stderr, "  fragmentation: batch %d done\n", batch);
  }
  const std::vector<TraceOp> teardown = trace.Teardown();
  caching_replay.Run(teardown);
  raw_replay.Run(teardown);
  return rows;
}

void PrintPhases(const std::vector<PhaseRow>& rows) {
  std::printf(
      "\nFragmentation: ResNet-like training trace, %d steps per batch size; memory of the"
      " CachingAllocator (sim:0)\n",
      FLAGS_steps);
  std::printf("%6s %7s %11s %11s %10s | %-31s | %-31s\n", "batch", "allocs", "peak in use",
              "reserved", "resv/peak", "mid-step: cached, largest, frag",
              "phase end: cached, largest, frag");
  for (const PhaseRow& r : rows) {
    const AllocatorStats& m = r.caching.mid_step;
    const AllocatorStats& e = r.caching.end;
    std::printf("%6d %7lld %11s %11s %10.2f | %10s %10s %9.3f | %10s %10s %9.3f\n", r.batch,
                static_cast<long long>(r.caching.allocations),
                HumanBytes(r.caching.peak_in_use).c_str(), HumanBytes(e.bytes_reserved).c_str(),
                static_cast<double>(e.bytes_reserved) / static_cast<double>(r.caching.peak_in_use),
                HumanBytes(m.cached_bytes).c_str(), HumanBytes(m.largest_free_block).c_str(),
                m.fragmentation(), HumanBytes(e.cached_bytes).c_str(),
                HumanBytes(e.largest_free_block).c_str(), e.fragmentation());
  }
  std::printf(
      "\nRaw calls and time per phase: caching vs no cache (one raw call per Allocate and"
      " Free, sim:1)\n");
  std::printf("%6s %12s %12s %12s %12s %17s %12s %12s %17s\n", "batch", "caching raw",
              "caching raw", "no-cache raw", "no-cache raw", "raw allocs", "caching", "no-cache",
              "ms/step");
  std::printf("%6s %12s %12s %12s %12s %17s %12s %12s %17s\n", "", "allocs", "frees", "allocs",
              "frees", "no-cache/caching", "ms/step", "ms/step", "no-cache/caching");
  for (const PhaseRow& r : rows) {
    const double caching_ms = r.caching.seconds * 1e3 / FLAGS_steps;
    const double raw_ms = r.raw.seconds * 1e3 / FLAGS_steps;
    char ratio[32] = "inf";
    if (r.caching_raw_allocs > 0) {
      std::snprintf(ratio, sizeof(ratio), "%.1f",
                    static_cast<double>(r.raw_allocs) / static_cast<double>(r.caching_raw_allocs));
    }
    std::printf("%6d %12lld %12lld %12lld %12lld %17s %12.2f %12.2f %17.1f\n", r.batch,
                static_cast<long long>(r.caching_raw_allocs),
                static_cast<long long>(r.caching_raw_frees), static_cast<long long>(r.raw_allocs),
                static_cast<long long>(r.raw_frees), ratio, caching_ms, raw_ms,
                raw_ms / caching_ms);
  }
}

void PrintStatsJson(const char* name, const AllocatorStats& s, const char* tail) {
  std::printf(
      "\"%s\": {\"bytes_in_use\": %lld, \"bytes_reserved\": %lld, \"cached_bytes\": %lld, "
      "\"largest_free_block\": %lld, \"fragmentation\": %.4f, \"raw_allocations\": %lld, "
      "\"raw_frees\": %lld}%s",
      name, static_cast<long long>(s.bytes_in_use), static_cast<long long>(s.bytes_reserved),
      static_cast<long long>(s.cached_bytes), static_cast<long long>(s.largest_free_block),
      s.fragmentation(), static_cast<long long>(s.raw_allocations),
      static_cast<long long>(s.raw_frees), tail);
}

void PrintJson(const std::vector<PairTiming>& pairs, const std::vector<PhaseRow>& phases) {
  std::printf("{\"pairs\": [");
  for (size_t i = 0; i < pairs.size(); ++i) {
    const PairTiming& p = pairs[i];
    std::printf(
        "%s\n  {\"bytes\": %lld, \"threads\": %d, \"caching_ns\": %.1f, \"raw_ns\": %.1f, "
        "\"cpu_ns\": %.1f}",
        i > 0 ? "," : "", static_cast<long long>(p.bytes), p.threads, p.ns[kCaching], p.ns[kRaw],
        p.ns[kCpu]);
  }
  std::printf("],\n\"phases\": [");
  for (size_t i = 0; i < phases.size(); ++i) {
    const PhaseRow& r = phases[i];
    std::printf(
        "%s\n  {\"batch\": %d, \"steps\": %d, \"allocations\": %lld, \"peak_in_use\": %lld, "
        "\"caching_raw_allocations\": %lld, \"caching_raw_frees\": %lld, "
        "\"no_cache_raw_allocations\": %lld, \"no_cache_raw_frees\": %lld, "
        "\"caching_ms_per_step\": %.3f, \"no_cache_ms_per_step\": %.3f, ",
        i > 0 ? "," : "", r.batch, FLAGS_steps, static_cast<long long>(r.caching.allocations),
        static_cast<long long>(r.caching.peak_in_use), static_cast<long long>(r.caching_raw_allocs),
        static_cast<long long>(r.caching_raw_frees), static_cast<long long>(r.raw_allocs),
        static_cast<long long>(r.raw_frees), r.caching.seconds * 1e3 / FLAGS_steps,
        r.raw.seconds * 1e3 / FLAGS_steps);
    PrintStatsJson("mid_step", r.caching.mid_step, ", ");
    PrintStatsJson("end", r.caching.end, "}");
  }
  std::printf("]}\n");
}

// Every flag is checked before anything runs, so a bad one fails at once with exit code 2.
void CheckFlags() {
  for (const std::string& s : SplitList(FLAGS_sections)) {
    if (s != "pairs" && s != "fragmentation") {
      throw Error(Status::InvalidArgument("braid_bench_allocator: unknown --sections entry '" + s +
                                          "' (pairs, fragmentation)"));
    }
  }
  if (FLAGS_rounds < 1 || FLAGS_steps < 1 || FLAGS_min_time_ms < 0) {
    throw Error(Status::InvalidArgument(
        "braid_bench_allocator: --rounds and --steps want >= 1, --min_time_ms >= 0"));
  }
  PositiveInts(FLAGS_sizes, "sizes");
  PositiveInts(FLAGS_threads, "threads");
  PositiveInts(FLAGS_batches, "batches");
}

void Main() {
  CheckFlags();
  std::fprintf(stderr, "braid_bench_allocator: hardware_threads=%u rounds=%d min_time_ms=%d\n",
               std::thread::hardware_concurrency(), FLAGS_rounds, FLAGS_min_time_ms);
  const std::vector<PairTiming> pairs =
      SectionOn("pairs") ? MeasurePairs() : std::vector<PairTiming>{};
  const std::vector<PhaseRow> phases =
      SectionOn("fragmentation") ? RunFragmentation() : std::vector<PhaseRow>{};
  if (FLAGS_json) {
    PrintJson(pairs, phases);
    return;
  }
  std::printf("braid_bench_allocator (hardware_threads=%u)\n", std::thread::hardware_concurrency());
  if (!pairs.empty()) PrintPairs(pairs);
  if (!phases.empty()) PrintPhases(phases);
}

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) {
  braid::ParseCommandLine(argc, argv, "braid_bench_allocator [--sections=pairs,fragmentation]");
  google::InitGoogleLogging(argv[0]);
  return braid::RunTool("braid_bench_allocator", [] { braid::bench::Main(); });
}
