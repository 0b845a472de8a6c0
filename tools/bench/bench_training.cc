// braid_bench_training: images/s and peak resident memory of ResNet training and inference.
//
// Rows (tools/bench/training_rows.h): resnet20 1x28x28 batch 64; resnet18 3x224x224 batch 8 and
// 32; resnet50 3x224x224 batch 1, 8 and 32; each in train mode (forward, backward, MomentumSGDUpdate) and infer mode (the
// test net, SpatialBN is_test=1), on synthetic data. Each row runs in its own child process (this
// binary re-executed with --row=NAME through posix_spawn, before any thread exists here), so the
// peak RSS (getrusage ru_maxrss) is that row's alone. The child builds the nets, plans their memory
// (--memory_plan, on by default as in braid_train: recyclable blobs share one arena), runs --warmup
// untimed iterations, then timed ones until --min_iters and --min_seconds are both reached, and
// reports batch / median iteration time.
//
// Threads: --threads is the nets' num_workers and, set in the children's environment (overriding
// any value there), OMP_NUM_THREADS (oneDNN's OpenMP teams inside Conv, pooling and batch norm) and
// OPENBLAS_NUM_THREADS (FC). The data reader adds one decoding thread. OMP_WAIT_POLICY is left as
// it is, as for PyTorch in compare_pytorch.py.
//
// Executors: each row runs with "simple" and with "dag" (--executor=both, the default), each in
// its own child process, and the table prints both images/s and dag/simple. Compare executors on
// an idle machine: with another process busy on one core, dag looked 2-4x faster, most likely
// because its extra runnable threads win a larger share of the busy cores. Rounds: this machine's
// speed drifts by 10-30% over minutes with nothing else running (one row's dag/simple measured
// 0.74 and 1.21 in two runs ten minutes apart), so each row runs --rounds times with the executors
// taking turns (simple, dag, simple, dag, ...), and each executor keeps its fastest round and its
// largest peak RSS. The "others" column shows the load, in cores: the CPU time other processes
// used during the row (from /proc/stat, minus the child's own CPU time), the largest of its runs'.
//
// Devices: --devices=cpu:0 (default), cpu:0,cpu:1 (data parallel over two CPU devices, the batch
// split), sim:0 or sim:0,sim:1 (simulated GPUs, runtime/device/sim/sim_device.h), cuda:0 (a GPU).
// On sim and cuda the JSON also reports device 0's caching allocator's peak bytes in use and
// reserved over the timed iterations, and its reserved peak during setup and warm-up (algorithm
// searches included).
//
//   braid_bench_training                              # the whole table, a few minutes on 2 cores
//   braid_bench_training --devices=sim:0,sim:1        # data parallel on two simulated GPUs
//   braid_bench_training --rows=resnet20,resnet18-b8  # rows whose name contains any item
//   braid_bench_training --rows=resnet50-b8-train --profile   # + per-op-type time on stderr
//   braid_bench_training --json                       # for tools/bench/compare_pytorch.py
//   braid_bench_training --algo_cache=PATH            # the rows share their algorithm choices
//   braid_bench_training --memory_plan=false          # blobs with storage of their own
//   braid_bench_training --list                       # row names
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "braid/status.h"
#include "tools/algorithm_cache.h"
#include "tools/bench/training_rows.h"
#include "tools/command_line.h"

DECLARE_string(device_memory);

DEFINE_string(rows, "", "comma-separated substrings; run the rows whose name contains one (all)");
DEFINE_string(row, "", "internal: run this one row in this process and print its result line");
DEFINE_int32(threads, 2, "net num_workers, OMP_NUM_THREADS and OPENBLAS_NUM_THREADS");
DEFINE_string(executor, "both", "simple, dag or both (each row with each, and dag/simple)");
DEFINE_string(devices, "cpu:0",
              "cpu:0, cpu:0,cpu:1, sim:0, sim:0,sim:1 or cuda:0 (several: data parallel)");
DEFINE_int32(rounds, 2, "child runs per row and executor, taking turns; the fastest counts");
DEFINE_int32(warmup, 1, "untimed iterations per row (the first one allocates)");
DEFINE_int32(min_iters, 2, "timed iterations per row, at least");
DEFINE_int32(max_iters, 200, "timed iterations per row, at most");
DEFINE_double(min_seconds, 5, "timed seconds per row, at least (unless --max_iters)");
DEFINE_bool(memory_plan, true,
            "bind the nets' recyclable blobs into a planned arena (as braid_train does)");
DEFINE_bool(recompute, true,
            "recompute SpatialBN + Relu outputs in the backward pass (runtime/models/recompute.h)");
DEFINE_string(recompute_budget, "",
              "with --recompute: also recompute convolutions until the train net's planned arena "
              "fits this size, e.g. 1.2G (runtime/models/training_footprint.h)");
DEFINE_bool(blocked_layouts, true,
            "keep activations between oneDNN ops blocked (runtime/models/blocked_layouts.h)");
DEFINE_bool(profile, false, "print each row's time by op type (OpTypeProfile) on stderr");
DEFINE_bool(json, false, "print the results as JSON instead of a table");
DEFINE_bool(list, false, "list the selected rows and exit");
DEFINE_string(algo_cache, "",
              "algorithm choices loaded from this file by every row's child when it exists and "
              "saved to it after the row (tools/algorithm_cache.h), so later rows and runs search "
              "only the shapes not yet in it");

namespace braid::bench {
namespace {

struct RowResult {
  const BenchRow* row = nullptr;
  std::string executor{};
  std::string error{};  // empty: the row ran
  RowTiming timing{};
  int64_t peak_rss_bytes = 0;
  double others_cores = 0;  // CPU used by other processes during the row, in cores
};

std::vector<std::string> SplitCommas(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::vector<const BenchRow*> SelectedRows() {
  const std::vector<std::string> filters = SplitCommas(FLAGS_rows);
  std::vector<const BenchRow*> rows;
  for (const BenchRow& row : BenchRows()) {
    bool selected = filters.empty();
    for (const std::string& f : filters) selected |= row.name().find(f) != std::string::npos;
    if (selected) rows.push_back(&row);
  }
  return rows;
}

// Busy CPU seconds of the whole machine so far (the first line of /proc/stat).
double MachineBusySeconds() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return (user + nice + system + irq + softirq + steal) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double WallSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

std::string ExitDescription(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "killed by signal " + std::to_string(sig) + (sig == SIGKILL ? " (out of memory?)" : "");
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

std::vector<std::string> Executors() {
  return FLAGS_executor == "both" ? std::vector<std::string>{"simple", "dag"}
                                  : std::vector<std::string>{FLAGS_executor};
}

std::vector<std::string> ChildArgs(const BenchRow& row, const std::string& executor) {
  return {"braid_bench_training",
          "--row=" + row.name(),
          "--threads=" + std::to_string(FLAGS_threads),
          "--executor=" + executor,
          "--devices=" + FLAGS_devices,
          "--device-memory=" + FLAGS_device_memory,
          "--warmup=" + std::to_string(FLAGS_warmup),
          "--min_iters=" + std::to_string(FLAGS_min_iters),
          "--max_iters=" + std::to_string(FLAGS_max_iters),
          "--min_seconds=" + std::to_string(FLAGS_min_seconds),
          std::string("--memory_plan=") + (FLAGS_memory_plan ? "true" : "false"),
          std::string("--recompute=") + (FLAGS_recompute ? "true" : "false"),
          "--recompute_budget=" + FLAGS_recompute_budget,
          std::string("--blocked_layouts=") + (FLAGS_blocked_layouts ? "true" : "false"),
          std::string("--profile=") + (FLAGS_profile ? "true" : "false"),
          "--algo_cache=" + FLAGS_algo_cache};
}

struct ChildRun {
  std::string out;  // its stdout
  int status = 0;   // as waitpid reports it
  double others_cores = 0;
};

// Runs this binary with `args`, its stdout on a pipe and its stderr ours, and waits for it.
ChildRun RunSelf(std::vector<std::string> args) {
  int fds[2];
  // Invariant: the system gives the benchmark a pipe (no input reaches here).
  PCHECK(pipe(fds) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const double busy_start = MachineBusySeconds(), wall_start = WallSeconds();
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  // Invariant: the benchmark can re-execute itself.
  CHECK_EQ(rc, 0) << "posix_spawn of /proc/self/exe failed";
  ChildRun run;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;) run.out.append(buffer, n);
  close(fds[0]);
  rusage usage{};
  // Invariant: the benchmark waits for its own child.
  PCHECK(wait4(pid, &run.status, 0, &usage) == pid);
  const double child_cpu = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 +
                           usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
  run.others_cores =
      std::max(0.0, (MachineBusySeconds() - busy_start - child_cpu) / (WallSeconds() - wall_start));
  return run;
}

// The child's result line, written by PrintResultLine; false when `out` holds none.
bool ParseResultLine(const std::string& out, RowResult* result) {
  const size_t at = out.rfind("result ");
  if (at == std::string::npos) return false;
  RowTiming& t = result->timing;
  long long rss = 0, params = 0, param_bytes = 0, gradient_bytes = 0, activation_bytes = 0;
  long long arena_bytes = 0, scratch_bytes = 0, device_in_use = 0, device_reserved = 0;
  long long device_warmup_reserved = 0;
  const int fields = std::sscanf(
      out.c_str() + at,
      "result %d %lf %lf %lf %lf %f %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld",
      &t.iterations, &t.seconds, &t.median_seconds, &t.images_per_second, &t.setup_seconds, &t.loss,
      &rss, &params, &param_bytes, &gradient_bytes, &activation_bytes, &arena_bytes,
      &scratch_bytes, &device_in_use, &device_reserved, &device_warmup_reserved);
  result->peak_rss_bytes = rss;
  t.trainable_params = params;
  t.param_bytes = param_bytes;
  t.gradient_bytes = gradient_bytes;
  t.activation_bytes = activation_bytes;
  t.arena_bytes = arena_bytes;
  t.scratch_bytes = scratch_bytes;
  t.device_peak_in_use_bytes = device_in_use;
  t.device_peak_reserved_bytes = device_reserved;
  t.device_warmup_peak_reserved_bytes = device_warmup_reserved;
  return fields == 16;
}

void PrintResultLine(const RowTiming& t) {
  std::printf("result %d %.6f %.6f %.6f %.3f %.6g %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld\n",
              t.iterations, t.seconds, t.median_seconds, t.images_per_second, t.setup_seconds,
              t.loss, static_cast<long long>(PeakRssBytes()),
              static_cast<long long>(t.trainable_params), static_cast<long long>(t.param_bytes),
              static_cast<long long>(t.gradient_bytes), static_cast<long long>(t.activation_bytes),
              static_cast<long long>(t.arena_bytes), static_cast<long long>(t.scratch_bytes),
              static_cast<long long>(t.device_peak_in_use_bytes),
              static_cast<long long>(t.device_peak_reserved_bytes),
              static_cast<long long>(t.device_warmup_peak_reserved_bytes));
}

RowResult RunRowInChild(const BenchRow& row, const std::string& executor) {
  RowResult result;
  result.row = &row;
  result.executor = executor;
  const ChildRun run = RunSelf(ChildArgs(row, executor));
  result.others_cores = run.others_cores;
  const bool exited_ok = WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0;
  if (!exited_ok || !ParseResultLine(run.out, &result)) result.error = ExitDescription(run.status);
  std::fprintf(stderr, "  %-20s %-6s ", row.name().c_str(), executor.c_str());
  if (result.error.empty()) {
    std::fprintf(stderr, "%9.1f images/s %8.0f MB  (%d iterations, others %.2f)\n",
                 result.timing.images_per_second, result.peak_rss_bytes / 1048576.0,
                 result.timing.iterations, result.others_cores);
  } else {
    std::fprintf(stderr, "failed: %s\n", result.error.c_str());
  }
  return result;
}

// Folds round `next` into `best`: the fastest round's timing, the largest peak RSS and load; a
// failed round fails the row.
void KeepFastest(const RowResult& next, RowResult* best) {
  if (!best->error.empty()) return;
  if (!next.error.empty()) {
    *best = next;
    return;
  }
  const int64_t rss = std::max(best->peak_rss_bytes, next.peak_rss_bytes);
  const double others = std::max(best->others_cores, next.others_cores);
  if (next.timing.images_per_second > best->timing.images_per_second) *best = next;
  best->peak_rss_bytes = rss;
  best->others_cores = others;
}

// The child's side: one row, one result line on stdout.
int RunOneRow(const std::string& name) {
  const BenchRow* row = FindBenchRow(name);
  if (row == nullptr) {
    std::fprintf(stderr, "braid_bench_training: unknown row '%s' (see --list)\n", name.c_str());
    return 2;
  }
  RowOptions o;
  o.threads = FLAGS_threads;
  o.executor = FLAGS_executor;
  o.devices = ParseDeviceList(FLAGS_devices, "braid_bench_training", "--devices");
  o.warmup = FLAGS_warmup;
  o.min_iters = FLAGS_min_iters;
  o.max_iters = FLAGS_max_iters;
  o.min_seconds = FLAGS_min_seconds;
  o.profile = FLAGS_profile;
  o.memory_plan = FLAGS_memory_plan;
  o.recompute = FLAGS_recompute;
  o.blocked_layouts = FLAGS_blocked_layouts;
  RowTiming t;
  try {
    o.recompute_budget = ParseBudget(FLAGS_recompute_budget, "--recompute_budget");
    AlgorithmCache algorithms(FLAGS_algo_cache);
    t = RunBenchRow(*row, o);
    algorithms.Save();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "braid_bench_training: row %s failed: %s\n", name.c_str(), e.what());
    return 1;
  }
  if (o.profile)
    std::fprintf(stderr, "%s (%d timed iterations):\n%s", name.c_str(), t.iterations,
                 t.profile.c_str());
  PrintResultLine(t);
  return 0;
}

std::string Settings() {
  char line[400];
  std::snprintf(line, sizeof(line),
                "devices=%s executor=%s threads=%d (num_workers, OMP_NUM_THREADS, "
                "OPENBLAS_NUM_THREADS) rounds=%d warmup=%d min_iters=%d min_seconds=%g "
                "memory_plan=%d recompute=%d recompute_budget=%s blocked_layouts=%d "
                "hardware_threads=%u",
                FLAGS_devices.c_str(), FLAGS_executor.c_str(), FLAGS_threads, FLAGS_rounds,
                FLAGS_warmup, FLAGS_min_iters, FLAGS_min_seconds, FLAGS_memory_plan ? 1 : 0,
                FLAGS_recompute ? 1 : 0,
                FLAGS_recompute_budget.empty() ? "0" : FLAGS_recompute_budget.c_str(),
                FLAGS_blocked_layouts ? 1 : 0,
                std::thread::hardware_concurrency());
  return line;
}

// The result of `row` with `executor`, or null.
const RowResult* ResultOf(const std::vector<RowResult>& results, const BenchRow* row,
                          const std::string& executor) {
  for (const RowResult& r : results) {
    if (r.row == row && r.executor == executor && r.error.empty()) return &r;
  }
  return nullptr;
}

void PrintTable(const std::vector<RowResult>& results) {
  const std::vector<std::string> executors = Executors();
  std::printf("\n%-9s %-10s %5s %-5s", "model", "input", "batch", "mode");
  for (const std::string& e : executors) std::printf(" %12s", (e + " img/s").c_str());
  if (executors.size() == 2) std::printf(" %11s", "dag/simple");
  std::printf(" %12s %9s %9s %9s %9s %10s %6s %8s %7s\n", "peak RSS MB", "params MB",
              "grads MB", "acts MB", "arena MB", "scratch MB", "iters", "s/iter", "others");
  for (size_t i = 0; i < results.size(); i += executors.size()) {
    const BenchRow& row = *results[i].row;
    std::printf("%-9s %-10s %5lld %-5s", row.model.c_str(), row.input().c_str(),
                static_cast<long long>(row.batch), row.mode());
    double others = 0;
    for (const std::string& e : executors) {
      const RowResult* r = ResultOf(results, &row, e);
      if (r == nullptr) {
        std::printf(" %12s", "failed");
        continue;
      }
      std::printf(" %12.1f", r->timing.images_per_second);
      others = std::max(others, r->others_cores);
    }
    const RowResult* simple = ResultOf(results, &row, executors[0]);
    if (executors.size() == 2) {
      const RowResult* dag = ResultOf(results, &row, executors[1]);
      if (simple && dag) {
        std::printf(" %11.3f", dag->timing.images_per_second / simple->timing.images_per_second);
      } else {
        std::printf(" %11s", "-");
      }
    }
    if (simple == nullptr) {
      std::printf("  failed: %s\n", results[i].error.c_str());
      continue;
    }
    const RowTiming& t = simple->timing;
    std::printf(" %12.0f %9.0f %9.0f %9.0f %9.0f %10.0f %6d %8.3f %7.2f\n",
                simple->peak_rss_bytes / 1048576.0, t.param_bytes / 1048576.0,
                t.gradient_bytes / 1048576.0, t.activation_bytes / 1048576.0,
                t.arena_bytes / 1048576.0, t.scratch_bytes / 1048576.0, t.iterations,
                t.median_seconds, others);
  }
  std::printf(
      "\n%s\nimages/s: batch / median timed iteration, per executor, its fastest of --rounds "
      "rounds taken in turns;\ndag/simple their ratio. The other columns are the first "
      "executor's. peak RSS: the row's child\nprocess (getrusage ru_maxrss), the largest "
      "round's.\nparams, grads, acts: bytes held by blobs at the end (parameters and momenta; "
      "*_grad* blobs; the rest);\narena: the memory plan's arena, which holds the planned grads "
      "and acts in fewer bytes (0: --memory_plan=false);\nscratch: the net's per-worker scratch "
      "areas (ops' temporary buffers: oneDNN layout copies, scratchpads);\nthe "
      "remainder of the peak is op-internal state, libraries and allocator slack.\nothers: cores' "
      "worth of CPU other processes used during the row (background load).\n",
      Settings().c_str());
}

void PrintJson(const std::vector<RowResult>& results, bool with_results) {
  std::printf(
      "{\"tool\": \"braid_bench_training\", \"executor\": \"%s\", \"threads\": %d, "
      "\"rounds\": %d, \"warmup\": %d, \"min_iters\": %d, \"max_iters\": %d, \"min_seconds\": %g, "
      "\"devices\": \"%s\", \"rows\": [",
      FLAGS_executor.c_str(), FLAGS_threads, FLAGS_rounds, FLAGS_warmup, FLAGS_min_iters,
      FLAGS_max_iters, FLAGS_min_seconds, FLAGS_devices.c_str());
  for (size_t i = 0; i < results.size(); ++i) {
    const RowResult& r = results[i];
    const BenchRow& row = *r.row;
    std::printf(
        "%s\n  {\"name\": \"%s\", \"executor\": \"%s\", \"model\": \"%s\", "
        "\"channels\": %lld, \"image_size\": %lld, \"batch\": %lld, \"classes\": %lld, "
        "\"mode\": \"%s\"",
        i ? "," : "", row.name().c_str(), r.executor.c_str(), row.model.c_str(),
        static_cast<long long>(row.channels), static_cast<long long>(row.image_size),
        static_cast<long long>(row.batch), static_cast<long long>(row.classes), row.mode());
    if (with_results && r.error.empty()) {
      const RowTiming& t = r.timing;
      std::printf(
          ", \"images_per_second\": %.3f, \"peak_rss_mb\": %.1f, \"iterations\": %d, "
          "\"median_seconds\": %.6f, \"setup_seconds\": %.3f, \"loss\": %.6g, "
          "\"others_cores\": %.2f, \"trainable_params\": %lld, \"param_mb\": %.1f, "
          "\"gradient_mb\": %.1f, \"activation_mb\": %.1f, \"arena_mb\": %.1f, "
          "\"scratch_mb\": %.1f, \"peak_device_in_use_bytes\": %lld, "
          "\"peak_device_reserved_bytes\": %lld, \"warmup_peak_device_reserved_bytes\": %lld",
          t.images_per_second, r.peak_rss_bytes / 1048576.0, t.iterations, t.median_seconds,
          t.setup_seconds, t.loss, r.others_cores, static_cast<long long>(t.trainable_params),
          t.param_bytes / 1048576.0, t.gradient_bytes / 1048576.0, t.activation_bytes / 1048576.0,
          t.arena_bytes / 1048576.0, t.scratch_bytes / 1048576.0,
          static_cast<long long>(t.device_peak_in_use_bytes),
          static_cast<long long>(t.device_peak_reserved_bytes),
          static_cast<long long>(t.device_warmup_peak_reserved_bytes));
    } else if (with_results) {
      std::printf(", \"error\": \"%s\"", r.error.c_str());
    }
    std::printf("}");
  }
  std::printf("\n]}\n");
}

int Main() {
  if (!FLAGS_row.empty()) return RunOneRow(FLAGS_row);
  if (FLAGS_threads <= 0 || FLAGS_rounds <= 0 ||
      (FLAGS_executor != "simple" && FLAGS_executor != "dag" && FLAGS_executor != "both")) {
    std::fprintf(stderr,
                 "braid_bench_training: --threads and --rounds must be positive and "
                 "--executor simple, dag or both\n");
    return 2;
  }
  const Status devices =
      StatusFromCall([] { ParseDeviceList(FLAGS_devices, "braid_bench_training", "--devices"); });
  if (!devices.ok()) {
    std::fprintf(stderr, "%s\n", devices.message().c_str());
    return 2;
  }
  const Status budget =
      StatusFromCall([] { ParseBudget(FLAGS_recompute_budget, "--recompute_budget"); });
  if (!budget.ok()) {
    std::fprintf(stderr, "braid_bench_training: %s\n", budget.message().c_str());
    return 2;
  }
  std::vector<RowResult> results;
  for (const BenchRow* row : SelectedRows()) {
    for (const std::string& executor : Executors()) {
      results.push_back({.row = row, .executor = executor});
    }
  }
  if (FLAGS_list) {
    if (FLAGS_json) {
      PrintJson(results, /*with_results=*/false);
    } else {
      for (const RowResult& r : results) std::printf("%s\n", r.row->name().c_str());
    }
    return 0;
  }
  const std::string threads = std::to_string(FLAGS_threads);
  setenv("OMP_NUM_THREADS", threads.c_str(), 1);
  setenv("OPENBLAS_NUM_THREADS", threads.c_str(), 1);
  std::fprintf(stderr, "braid_bench_training: %s\n", Settings().c_str());
  const size_t per_row = Executors().size();
  for (size_t first = 0; first < results.size(); first += per_row) {
    for (int round = 0; round < FLAGS_rounds; ++round) {
      for (size_t i = first; i < first + per_row; ++i) {
        const RowResult run = RunRowInChild(*results[i].row, results[i].executor);
        if (round == 0) {
          results[i] = run;
        } else {
          KeepFastest(run, &results[i]);
        }
      }
    }
  }
  if (FLAGS_json) {
    PrintJson(results, /*with_results=*/true);
  } else {
    PrintTable(results);
  }
  bool all_ok = true;
  for (const RowResult& r : results) all_ok &= r.error.empty();
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) {
  braid::ParseCommandLine(argc, argv, "images/s and peak RSS of ResNet training and inference");
  google::InitGoogleLogging(argv[0]);
  return braid::bench::Main();
}
