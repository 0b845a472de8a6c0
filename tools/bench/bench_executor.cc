// braid_bench_executor: per-op scheduling overhead of the "dag" executor against raw oneTBB, and
// of launching ops on a simulated GPU's streams.
//
// For each net shape (a random layered DAG, one long chain, repeated 1,000-wide fan-out/fan-in
// blocks) of ~100,000 NoOp ops and each worker count, it times Net::Run of a braid "dag" net and,
// in the same process and interleaved with it, a bare oneTBB flow graph of empty continue_nodes
// over the same dataflow edges (tools/bench/raw_flow_graph.h) in an arena of the same size. Both
// are built twice, in either order (see Measure), and each keeps its better median. It prints
// ns/op of each, their ratio and the target ratio.
//
// Then, for the random DAG and the chain (--sim_ops ops), the same net with every op on sim:0
// (runtime/device/sim/sim_device.h), with the simple executor and with dag: "launch ns/op" is the
// host's time to launch every op while the device's streams are held (so no kernel runs meanwhile),
// "run ns/op" a whole Run (launches and the stream threads serving them), beside the same net's
// Run on the host, with their ratio.
//
//   braid_bench_executor                      # defaults: 100000 ops, 21 repetitions, workers 1,2
//   braid_bench_executor --reps=51 --seed=7   # the seed is printed and reproduces the random DAG
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <oneapi/tbb/version.h>

#include "planner/dataflow.h"
#include "runtime/core/device_context.h"
#include "runtime/core/workspace.h"
#include "runtime/device/sim/sim_device.h"
#include "runtime/exec/dag_net.h"
#include "runtime/exec/net_args.h"
#include "tools/bench/executor_nets.h"
#include "tools/bench/raw_flow_graph.h"
#include "tools/command_line.h"

DEFINE_int32(ops, 100000, "ops per net");
DEFINE_int32(reps, 21, "timed Runs per executor and case; the median is reported");
DEFINE_int32(warmup, 3, "untimed Runs per executor before timing (the first Run may be special)");
DEFINE_uint64(seed, 20240601, "seed of the random layered DAG");
DEFINE_int32(width, 64, "width of the random layered DAG");
DEFINE_int32(fan_width, 1000, "middle ops per fan-out/fan-in block");
DEFINE_string(workers, "1,2", "comma-separated worker counts");
DEFINE_string(shapes, "random,chain,fan", "comma-separated shape name prefixes to run");
DEFINE_int32(sim_ops, 20000, "ops per net of the sim:0 launch rows (0: none)");

namespace braid::bench {
namespace {

struct Shape {
  std::string name;
  double target;  // braid/raw ratio to stay at or under; 0 means "report only"
  NetDef (*build)(int workers);
};

struct Result {
  std::string shape;
  int ops = 0;
  int workers = 0;
  int braid_nodes = 0;
  double braid_ns_per_op = 0;
  double raw_ns_per_op = 0;
  double target = 0;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

template <typename Fn>
double TimeNanos(Fn&& fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
}

void RunBraid(Net* net) {
  Status s = net->Run();
  // Invariant: the benchmark's own nets run (its flags are checked first).
  CHECK(s.ok()) << s.ToString();
}

struct Medians {
  double braid_ns = 0;
  double raw_ns = 0;
  int braid_nodes = 0;
};

// Builds both executors, raw first or braid first, and times their Runs interleaved, alternating
// which goes first, so background load hits both alike.
Medians MeasureOnce(const NetDef& def, int workers, bool raw_first) {
  std::unique_ptr<RawFlowGraph> raw;
  if (raw_first) raw = std::make_unique<RawFlowGraph>(BuildDataflow(def), workers);
  Workspace ws;
  Net* net = ws.CreateNet(def);
  if (!raw_first) raw = std::make_unique<RawFlowGraph>(BuildDataflow(def), workers);
  for (int i = 0; i < FLAGS_warmup; ++i) {
    RunBraid(net);
    raw->Run();
  }
  std::vector<double> braid_ns, raw_ns;
  for (int rep = 0; rep < FLAGS_reps; ++rep) {
    if (rep % 2 == 0) braid_ns.push_back(TimeNanos([&] { RunBraid(net); }));
    raw_ns.push_back(TimeNanos([&] { raw->Run(); }));
    if (rep % 2 == 1) braid_ns.push_back(TimeNanos([&] { RunBraid(net); }));
  }
  auto* dag = dynamic_cast<DagNet*>(net);
  // Invariant: the benchmark builds its nets as dag nets.
  CHECK(dag != nullptr) << "net '" << def.name() << "' is not a DagNet";
  return {Median(braid_ns), Median(raw_ns), dag->num_chains()};
}

// With ~100k nodes a Run is bound by cache misses, so where the heap put each graph matters: the
// one built second fills the holes the first one's construction left, which can cost it 1.5x.
// Each executor is therefore measured in both construction orders and keeps its better median.
Result Measure(const Shape& shape, int workers) {
  NetDef def = shape.build(workers);
  def.set_name(shape.name);
  Medians raw_first = MeasureOnce(def, workers, /*raw_first=*/true);
  Medians braid_first = MeasureOnce(def, workers, /*raw_first=*/false);
  Result r;
  r.shape = shape.name;
  r.ops = def.op_size();
  r.workers = workers;
  r.braid_nodes = braid_first.braid_nodes;
  r.braid_ns_per_op = std::min(raw_first.braid_ns, braid_first.braid_ns) / r.ops;
  r.raw_ns_per_op = std::min(raw_first.raw_ns, braid_first.raw_ns) / r.ops;
  r.target = shape.target;
  return r;
}

std::vector<std::string> SplitCommas(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(item);
  return items;
}

std::vector<int> ParseWorkers(const std::string& list) {
  std::vector<int> workers;
  for (const std::string& item : SplitCommas(list)) {
    int w = std::atoi(item.c_str());
    if (w <= 0 || w > kMaxNetThreads) {
      std::fprintf(stderr, "--workers must list counts from 1 to %d, got '%s'\n", kMaxNetThreads,
                   list.c_str());
      std::exit(kExitBadFlags);
    }
    workers.push_back(w);
  }
  return workers;
}

bool Selected(const Shape& shape) {
  for (const std::string& prefix : SplitCommas(FLAGS_shapes)) {
    if (!prefix.empty() && shape.name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

void PrintTable(const std::vector<Result>& results) {
  std::printf("\n%-16s %7s %7s %11s %12s %12s %11s %8s %6s\n", "shape", "ops", "workers",
              "braid nodes", "braid ns/op", "raw ns/op", "braid/raw", "target", "met");
  for (const Result& r : results) {
    double ratio = r.braid_ns_per_op / r.raw_ns_per_op;
    char target[16] = "report";
    const char* met = "-";
    if (r.target > 0) {
      std::snprintf(target, sizeof(target), "<=%.2f", r.target);
      met = ratio <= r.target ? "yes" : "NO";
    }
    std::printf("%-16s %7d %7d %11d %12.1f %12.1f %11.3f %8s %6s\n", r.shape.c_str(), r.ops,
                r.workers, r.braid_nodes, r.braid_ns_per_op, r.raw_ns_per_op, ratio, target, met);
  }
  std::printf(
      "\nns/op: median over %d Runs of (Run wall time / ops) after %d warm-up Runs, the better of "
      "two builds\n(raw built first, braid built first). raw = bare oneTBB continue_nodes on "
      "BuildDataflow's edges in a\ntask_arena of the same size. braid nodes: flow-graph nodes "
      "after chain fusion (raw has one node per op).\n",
      FLAGS_reps, FLAGS_warmup);
}

// Holds a stream until Open(): the launch rows launch a net's ops behind it.
class HeldStream final : public KernelTask {
 public:
  void Execute() override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }
  void Abandon(const Status&) override {}
  std::string Describe() const override { return "braid_bench_executor's hold"; }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;  // guarded by mu_
};

struct SimRow {
  std::string shape, executor;
  int workers = 0, ops = 0;
  double launch_ns = 0, run_ns = 0, host_run_ns = 0;
};

// ns per op for the host to launch every op of `net` (on sim:0, streams 0..streams-1 held).
double LaunchNanosPerOp(Net* net, int streams) {
  SimDevice* sim = SimDevice::Get(0);
  std::vector<std::unique_ptr<HeldStream>> holds;
  for (int s = 0; s < std::min(streams, kMaxDeviceStreams); ++s) {  // the streams a net uses
    holds.push_back(std::make_unique<HeldStream>());
    sim->stream(s)->Launch(holds.back().get());
  }
  const int64_t target = sim->stats().kernels_launched + net->num_ops();
  Status status;
  std::thread runner;
  const double ns = TimeNanos([&] {
    runner = std::thread([&] { status = net->Run(); });
    while (sim->stats().kernels_launched < target) std::this_thread::yield();
  });
  // Timed until every op was launched; then the held streams go and the run drains them.
  for (auto& hold : holds) hold->Open();
  runner.join();
  // Invariant: the benchmark's own nets run (its flags are checked first).
  CHECK(status.ok()) << status.ToString();
  return ns / net->num_ops();
}

SimRow MeasureSim(const std::string& shape, NetDef def, const std::string& executor, int workers) {
  def.set_type(executor);
  SimRow row{shape, executor, executor == "dag" ? workers : 1, def.op_size()};
  Workspace host_ws, sim_ws;
  Net* host = host_ws.CreateNet(def);
  *def.mutable_device_option() = DeviceToProto(Device{DeviceType::kSim, 0});
  Net* sim = sim_ws.CreateNet(def);
  for (int i = 0; i < FLAGS_warmup; ++i) {
    RunBraid(host);
    RunBraid(sim);
  }
  std::vector<double> launch, run, host_run;
  for (int rep = 0; rep < FLAGS_reps; ++rep) {
    host_run.push_back(TimeNanos([&] { RunBraid(host); }));
    run.push_back(TimeNanos([&] { RunBraid(sim); }));
    launch.push_back(LaunchNanosPerOp(sim, row.workers));
  }
  row.launch_ns = Median(launch);
  row.run_ns = Median(run) / row.ops;
  row.host_run_ns = Median(host_run) / row.ops;
  return row;
}

void PrintSimTable(const std::vector<SimRow>& rows) {
  std::printf("\nasync launch on sim:0 (every op of the net on the simulated GPU):\n");
  std::printf("%-16s %-8s %7s %7s %14s %12s %14s %10s\n", "shape", "executor", "workers", "ops",
              "launch ns/op", "run ns/op", "host run ns/op", "run/host");
  for (const SimRow& r : rows) {
    std::printf("%-16s %-8s %7d %7d %14.1f %12.1f %14.1f %10.2f\n", r.shape.c_str(),
                r.executor.c_str(), r.workers, r.ops, r.launch_ns, r.run_ns, r.host_run_ns,
                r.run_ns / r.host_run_ns);
  }
  std::printf(
      "\nlaunch ns/op: median over %d Runs of the host's time to launch every op while the "
      "device's streams are held\n(nothing runs on them meanwhile); run ns/op: median Run "
      "(launches, then the stream threads serve the\nkernels, pipelined) / ops; host run ns/op: "
      "the same net with its ops on the host.\n",
      FLAGS_reps);
}

int Main() {
  if (FLAGS_ops <= 0 || FLAGS_reps <= 0 || FLAGS_width <= 0 || FLAGS_fan_width <= 0 ||
      FLAGS_warmup < 0 || FLAGS_sim_ops < 0) {
    std::fprintf(stderr,
                 "--ops, --reps, --width and --fan-width must be positive, --warmup and --sim-ops "
                 ">= 0\n");
    return kExitBadFlags;
  }
  const std::vector<Shape> shapes = {
      {"random_dag_w" + std::to_string(FLAGS_width), 1.10,
       [](int w) { return RandomLayeredDag(FLAGS_ops, FLAGS_width, FLAGS_seed, w); }},
      {"chain", 0.50, [](int w) { return Chain(FLAGS_ops, w); }},
      {"fan_out_in_w" + std::to_string(FLAGS_fan_width), 0,
       [](int w) { return FanOutFanIn(FLAGS_ops, FLAGS_fan_width, w); }},
  };
  std::printf("braid_bench_executor: seed=%llu reps=%d warmup=%d oneTBB=%s hardware_threads=%u\n",
              static_cast<unsigned long long>(FLAGS_seed), FLAGS_reps, FLAGS_warmup,
              TBB_VERSION_STRING, std::thread::hardware_concurrency());
  std::vector<Result> results;
  for (const Shape& shape : shapes) {
    if (!Selected(shape)) continue;
    for (int workers : ParseWorkers(FLAGS_workers)) {
      results.push_back(Measure(shape, workers));
      std::fprintf(stderr, "  done: %s, %d workers\n", shape.name.c_str(), workers);
    }
  }
  PrintTable(results);
  if (FLAGS_sim_ops > 0) {
    std::vector<SimRow> sim_rows;
    const std::string random = "random_dag_w" + std::to_string(FLAGS_width);
    for (int workers : ParseWorkers(FLAGS_workers)) {
      for (const char* executor : {"simple", "dag"}) {
        if (std::string(executor) == "simple" && workers != ParseWorkers(FLAGS_workers)[0]) continue;
        sim_rows.push_back(MeasureSim(
            random, RandomLayeredDag(FLAGS_sim_ops, FLAGS_width, FLAGS_seed, workers), executor,
            workers));
        sim_rows.push_back(MeasureSim("chain", Chain(FLAGS_sim_ops, workers), executor, workers));
        std::fprintf(stderr, "  done: sim:0, %s, %d workers\n", executor, workers);
      }
    }
    PrintSimTable(sim_rows);
  }
  return 0;
}

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) {
  gflags::SetUsageMessage("per-op overhead of braid's dag executor vs raw oneTBB");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  return braid::bench::Main();
}
