// braid_bench_allreduce: cross-process all-reduce bandwidth over Gloo on loopback
// (runtime/dist/process_group.h), ring against halving-doubling, side by side in one run.
//
// For each process count of --processes, the binary starts that many copies of itself (fork +
// exec of /proc/self/exe with the hidden flags --rank, --world_size and --rendezvous, a fresh
// `file://` rendezvous directory per process count). The ranks connect one ProcessGroup, and for
// each buffer size of --sizes (float32): check one all-reduce of rank+1 against the exact sum,
// zero the buffer (zeros stay zeros, so no value grows across iterations), run --warmup
// all-reduces of each algorithm, meet at a barrier, then --iters iterations that each time one
// ring all-reduce and one halving-doubling all-reduce back to back (alternating which goes
// first), so both see the same machine. Rank 0 keeps the median of its per-iteration times of
// each and writes them to the rendezvous directory; the parent prints one table:
//
//   size, processes, per algorithm: time per all-reduce (median, us), algorithm bandwidth
//   (bytes / time) and bus bandwidth (2(n-1)/n x bytes / time, as NCCL's tests report: what each
//   rank's link carries in a bandwidth-optimal all-reduce), and hd/ring = ring time / hd time
//   (above 1: halving-doubling is faster).
//
// Every child dies with the parent (PR_SET_PDEATHSIG), and the parent kills and reaps every child
// still running when one fails or when it returns. Loopback on one machine measures memory copies
// and the kernel's TCP stack sharing the machine's cores with the reductions, not a network: with
// more processes than cores the processes also take turns on the cores.
//
//   braid_bench_allreduce                                   # 1K..64M, 2 and 4 processes
//   braid_bench_allreduce --sizes=1K,16K,256K,4M --processes=2 --iters=10   # quick, < 1 min
//
// Only ratios from one run mean anything. Not part of ctest. Exit codes: 0, 1 a failure (a rank
// that failed, with its exit status), 2 bad flags.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "braid/status.h"
#include "runtime/dist/process_group.h"
#include "tools/command_line.h"

DEFINE_string(sizes, "1K,16K,256K,4M,64M", "buffer sizes in bytes (float32 elements), 64K style");
DEFINE_string(processes, "2,4", "process counts (powers of two: halving-doubling needs them)");
DEFINE_int32(iters, 20, "timed iterations per size and algorithm (the median is reported)");
DEFINE_int32(warmup, 3, "untimed all-reduces per size and algorithm before the timed ones");
DEFINE_int32(timeout_s, 300, "seconds a process count may take before its ranks are killed");
// Hidden: set by the parent for each rank it starts.
DEFINE_int32(rank, -1, "internal: this rank (set by the parent process)");
DEFINE_int32(world_size, 0, "internal: the ranks of this run (set by the parent process)");
DEFINE_string(rendezvous, "", "internal: file:// rendezvous directory (set by the parent)");

namespace braid::bench {
namespace {

constexpr char kTool[] = "braid_bench_allreduce";
constexpr AllreduceAlgorithm kAlgorithms[2] = {AllreduceAlgorithm::kRing,
                                               AllreduceAlgorithm::kHalvingDoubling};

std::vector<int64_t> ParseList(const std::string& list, const std::string& flag) {
  std::vector<int64_t> values;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) continue;
    int64_t value = 0;
    try {
      value = ParseByteSize(item, flag);
    } catch (const Error&) {
    }
    if (value <= 0) {
      throw Error(Status::InvalidArgument(std::string(kTool) + ": --" + flag +
                                          " wants positive numbers (64K style), got '" + item +
                                          "'"));
    }
    values.push_back(value);
  }
  if (values.empty()) throw Error(Status::InvalidArgument(std::string(kTool) + ": --" + flag +
                                                          " is empty"));
  return values;
}

// Every flag is checked before anything runs, so a bad one fails at once with exit code 2.
void CheckFlags() {
  for (int64_t bytes : ParseList(FLAGS_sizes, "sizes")) {
    if (bytes % 4 != 0 || bytes > (int64_t{1} << 31)) {
      throw Error(Status::InvalidArgument(std::string(kTool) +
                                          ": --sizes wants multiples of 4 bytes up to 2G, got " +
                                          std::to_string(bytes)));
    }
  }
  for (int64_t p : ParseList(FLAGS_processes, "processes")) {
    if (p < 2 || p > 64 || (p & (p - 1)) != 0) {
      throw Error(Status::InvalidArgument(std::string(kTool) +
                                          ": --processes wants powers of two from 2 to 64, got " +
                                          std::to_string(p)));
    }
  }
  if (FLAGS_iters < 1 || FLAGS_warmup < 0 || FLAGS_timeout_s < 1) {
    throw Error(Status::InvalidArgument(std::string(kTool) +
                                        ": --iters and --timeout_s want >= 1, --warmup >= 0"));
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void Check(const Status& s) {
  if (!s.ok()) throw Error(s);
}

// ---- A rank (the hidden mode) ----

// One all-reduce of rank+1 must give 1+2+...+n in every element.
void CheckSum(ProcessGroup* group, std::vector<float>* buffer, uint32_t tag,
              AllreduceAlgorithm algorithm) {
  std::fill(buffer->begin(), buffer->end(), static_cast<float>(group->rank() + 1));
  Check(group->AllreduceSum(buffer->data(), buffer->size(), tag, algorithm));
  const float want = static_cast<float>(group->size() * (group->size() + 1) / 2);
  for (float x : *buffer) {
    if (x != want) {
      throw Error(Status::Internal(std::string(kTool) + ": rank " + std::to_string(group->rank()) +
                                   " got " + std::to_string(x) + " from an all-reduce of " +
                                   std::to_string(buffer->size()) + " floats, want " +
                                   std::to_string(want)));
    }
  }
}

// Median seconds per all-reduce of `bytes` with each algorithm, as this rank timed them.
std::vector<double> TimeSize(ProcessGroup* group, int64_t bytes) {
  std::vector<float> buffer(static_cast<size_t>(bytes / 4));
  for (int a = 0; a < 2; ++a) {
    const uint32_t tag = static_cast<uint32_t>(a + 1);
    CheckSum(group, &buffer, tag, kAlgorithms[a]);
    std::fill(buffer.begin(), buffer.end(), 0.0f);
    for (int i = 0; i < FLAGS_warmup; ++i) {
      Check(group->AllreduceSum(buffer.data(), buffer.size(), tag, kAlgorithms[a]));
    }
  }
  Check(group->Barrier(3));
  std::vector<double> seconds[2];
  for (int i = 0; i < FLAGS_iters; ++i) {
    for (int k = 0; k < 2; ++k) {
      const int a = (i + k) % 2;  // alternate which algorithm goes first
      const auto start = std::chrono::steady_clock::now();
      Check(group->AllreduceSum(buffer.data(), buffer.size(), static_cast<uint32_t>(a + 1),
                                kAlgorithms[a]));
      seconds[a].push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  return {Median(seconds[0]), Median(seconds[1])};
}

// Connects, times every size, and on rank 0 writes "bytes ring_seconds hd_seconds" lines to
// <rendezvous dir>/results (written to a temporary name and renamed, so a file that exists is
// complete).
void RunRank() {
  ProcessGroupOptions options;
  options.rank = FLAGS_rank;
  options.world_size = FLAGS_world_size;
  options.rendezvous = FLAGS_rendezvous;
  options.job_name = kTool;
  options.timeout = std::chrono::seconds(FLAGS_timeout_s);
  std::unique_ptr<ProcessGroup> group;
  Check(ProcessGroup::Connect(options, &group));
  std::ostringstream results;
  for (int64_t bytes : ParseList(FLAGS_sizes, "sizes")) {
    const std::vector<double> t = TimeSize(group.get(), bytes);
    results << bytes << " " << t[0] << " " << t[1] << "\n";
  }
  Check(group->Barrier(4));
  if (FLAGS_rank != 0) return;
  const std::string dir = FLAGS_rendezvous.substr(std::string("file://").size());
  {
    std::ofstream out(dir + "/results.tmp");
    out.precision(9);
    out << results.str();
    if (!out) throw Error(Status::Internal(std::string(kTool) + ": cannot write " + dir));
  }
  std::filesystem::rename(dir + "/results.tmp", dir + "/results");
}

// ---- The parent ----

// The ranks of one process count: spawned with fork + exec of this binary (never a bare fork),
// each dying with the parent; the destructor kills and reaps every one still running.
class Ranks {
 public:
  Ranks(int processes, const std::string& rendezvous) {
    for (int r = 0; r < processes; ++r) {
      Spawn({"/proc/self/exe", "--rank=" + std::to_string(r),
             "--world_size=" + std::to_string(processes), "--rendezvous=" + rendezvous,
             "--sizes=" + FLAGS_sizes, "--iters=" + std::to_string(FLAGS_iters),
             "--warmup=" + std::to_string(FLAGS_warmup),
             "--timeout_s=" + std::to_string(FLAGS_timeout_s)});
    }
  }
  ~Ranks() {
    for (pid_t pid : running_) kill(pid, SIGKILL);
    for (pid_t pid : running_) waitpid(pid, nullptr, 0);
  }
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

  // Waits for every rank; throws naming the first that failed (the others are then killed) or
  // the ranks still running after `timeout`.
  void WaitAll(std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!running_.empty()) {
      int status = 0;
      const pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid > 0) {
        const auto it = std::find(running_.begin(), running_.end(), pid);
        if (it == running_.end()) continue;
        running_.erase(it);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
        const int rank = ranks_[pid];
        throw Error(Status::Internal(
            std::string(kTool) + ": rank " + std::to_string(rank) + " of " +
            std::to_string(ranks_.size()) + " failed (" +
            (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                 : "exit status " + std::to_string(WEXITSTATUS(status))) +
            ")"));
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        throw Error(Status::Internal(std::string(kTool) + ": " + std::to_string(running_.size()) +
                                     " ranks still running after --timeout_s=" +
                                     std::to_string(timeout.count()) + "; killed"));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  void Spawn(std::vector<std::string> args) {
    // Everything exec needs is built before fork: the child may only call async-signal-safe code.
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw Error(Status::Internal(std::string(kTool) + ": fork failed"));
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);  // the parent died before prctl
      execv(argv[0], argv.data());
      _exit(127);
    }
    ranks_[pid] = static_cast<int>(ranks_.size());
    running_.push_back(pid);
  }

  std::vector<pid_t> running_;
  std::map<pid_t, int> ranks_;
};

struct Row {
  int64_t bytes = 0;
  int processes = 0;
  double seconds[2] = {0, 0};  // ring, halving-doubling
};

// Runs every size on `processes` ranks in a fresh rendezvous directory (removed afterwards).
std::vector<Row> RunProcesses(int processes) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                    "/braid_bench_allreduce_XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) throw Error(Status::Internal("mkdtemp failed: " + dir));
  struct RemoveDir {
    std::string dir;
    ~RemoveDir() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } remove_dir{dir};
  {
    Ranks ranks(processes, "file://" + dir);
    ranks.WaitAll(std::chrono::seconds(FLAGS_timeout_s));
  }
  std::ifstream in(dir + "/results");
  std::vector<Row> rows;
  Row row;
  row.processes = processes;
  while (in >> row.bytes >> row.seconds[0] >> row.seconds[1]) rows.push_back(row);
  if (rows.size() != ParseList(FLAGS_sizes, "sizes").size()) {
    throw Error(Status::Internal(std::string(kTool) + ": rank 0 of " + std::to_string(processes) +
                                 " left no complete results in " + dir));
  }
  return rows;
}

std::string SizeText(int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

void PrintTable(const std::vector<Row>& rows) {
  std::printf(
      "%-8s %5s | %10s %9s %9s | %10s %9s %9s | %7s\n", "size", "procs", "ring us", "algbw",
      "busbw", "hd us", "algbw", "busbw", "hd/ring");
  for (const Row& r : rows) {
    std::printf("%-8s %5d", SizeText(r.bytes).c_str(), r.processes);
    const double bus = 2.0 * (r.processes - 1) / r.processes;
    for (double s : r.seconds) {
      const double algbw = static_cast<double>(r.bytes) / s / 1e9;
      std::printf(" | %10.1f %9.3f %9.3f", s * 1e6, algbw, algbw * bus);
    }
    std::printf(" | %7.2f\n", r.seconds[0] / r.seconds[1]);
  }
}

// The first three fields of /proc/loadavg: other work on the machine moves every number here.
std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

void RunParent() {
  std::printf(
      "%s: Gloo all-reduce (float32 sum) over loopback; nproc=%u, load average %s; median of %d "
      "iterations on rank 0 after %d warm-up\n"
      "algbw = bytes / time, busbw = algbw x 2(n-1)/n (GB/s = 1e9 B/s); hd/ring = ring time / "
      "halving-doubling time (> 1: halving-doubling faster)\n",
      kTool, std::thread::hardware_concurrency(), LoadAverage().c_str(), FLAGS_iters,
      FLAGS_warmup);
  std::fflush(stdout);
  std::vector<Row> rows;
  for (int64_t p : ParseList(FLAGS_processes, "processes")) {
    std::fprintf(stderr, "%s: %lld processes...\n", kTool, static_cast<long long>(p));
    for (const Row& row : RunProcesses(static_cast<int>(p))) rows.push_back(row);
  }
  PrintTable(rows);
}

void Main() {
  CheckFlags();
  if (FLAGS_rank >= 0) {
    RunRank();
  } else {
    RunParent();
  }
}

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) {
  braid::ParseCommandLine(argc, argv,
                          "braid_bench_allreduce [--sizes=1K,...,64M] [--processes=2,4] "
                          "[--iters=20]");
  google::InitGoogleLogging(argv[0]);
  return braid::RunTool(braid::bench::kTool, [] { braid::bench::Main(); });
}
