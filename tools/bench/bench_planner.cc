// braid_bench_planner: how well and how fast the memory planner packs real nets.
//
//   braid_bench_planner [--rows SUBSTR,...] [--repeats 5]
//
// For each model of tools/bench/planner_rows.h (ResNet-20 b64, ResNet-50 b32, a 32-branch wide
// net) it runs the init net once (parameter shapes), then plans the train net (training mode,
// gradients and activations shared) and the test net (inference), each for the dag and the simple
// executor, with the runtime's request (PlanRequestFor: sizes from shape inference, in-place pairs
// from the schemas; the blobs a trainer reads, loss, accuracy and lr, are kept). Columns:
//   naive      every recycled blob (activations and gradients) in its own storage: the baseline
//   planned    the arena PlanMemory packs; saved% is 1 - planned/naive
//   bound      the lower bound no valid plan beats (max-weight antichain for dag, peak live bytes
//              in listed order for simple); plan/bound is the gap
//   plan ms    median over --repeats of PlanMemory (analysis, packing and bound)
//   bound ms   median of the bound alone from scratch (lifetimes, packing problem, max-flow)
//   verify     VerifyMemoryPlan, the independent checker, on the plan
// and checks the targets: planned <= 1.05 x bound on every row; ResNet-50 training
// planned in <= 50 ms and its activations+gradients reduced by >= 60% against naive.
//
// Not part of ctest. Exit codes: 0 (whether or not targets are met), 1 a failure, 2 bad flags.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "braid/status.h"
#include "planner/blob_lifetimes.h"
#include "planner/lower_bound.h"
#include "planner/memory_plan.h"
#include "planner/packing_problem.h"
#include "planner/verify_plan.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/memory_planning.h"
#include "runtime/exec/observer.h"
#include "tools/bench/planner_rows.h"
#include "tools/command_line.h"
#include "tools/plan_summary.h"

DEFINE_string(rows, "", "comma-separated substrings; plan the rows whose name contains one (all)");
DEFINE_int32(repeats, 5, "planning runs per row; times are medians");

namespace braid::bench {
namespace {

constexpr double kMaxPlannedOverBound = 1.05;
constexpr double kMaxResNet50TrainPlanMs = 50;
constexpr double kMinResNet50TrainSaved = 0.60;

struct Row {
  const PlannerModel* model = nullptr;
  bool training = true;
  PlanExecutor executor = PlanExecutor::kDag;

  std::string name() const { return model->name() + (training ? "-train" : "-infer"); }
  const char* executor_name() const { return executor == PlanExecutor::kDag ? "dag" : "simple"; }
};

struct RowResult {
  int64_t naive = 0, planned = 0, bound = 0;
  int recycled = 0;
  double plan_ms = 0, bound_ms = 0;
  std::string verify;  // "ok" or the checker's message
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The lower bound computed on its own, as PlanMemory computes it: per device arena.
int64_t LowerBoundFromScratch(const NetDef& net, const PlanRequest& request) {
  const BlobLifetimes lifetimes(net, request);
  int64_t bound = 0;
  for (const std::vector<int>& blobs : lifetimes.BlobsByDevice()) {
    bound += MaxWeightAntichain(PackingProblemFor(lifetimes, blobs));
  }
  return bound;
}

template <typename Fn>
double MedianMs(int repeats, Fn&& fn) {
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    const int64_t start = NowNanos();
    fn();
    ms.push_back((NowNanos() - start) / 1e6);
  }
  return Median(ms);
}

RowResult PlanRow(const Row& row, const TrainingNets& nets, const Workspace& ws) {
  NetDef net = row.training ? nets.train : nets.test;
  net.set_type(row.executor_name());
  MemoryPlanOptions options;
  options.mode = row.training ? PlanMode::kTraining : PlanMode::kInference;
  options.share_activations = row.training;
  options.share_parameter_gradients = row.training;
  options.keep = {nets.loss, nets.accuracy, nets.lr, nets.test_loss, nets.test_accuracy};
  PlanRequest request = PlanRequestFor(net, ws, options);
  request.executor = row.executor;

  MemoryPlan plan;
  RowResult r;
  r.plan_ms = MedianMs(FLAGS_repeats, [&] { plan = PlanMemory(net, request); });
  int64_t bound = 0;
  r.bound_ms = MedianMs(FLAGS_repeats, [&] { bound = LowerBoundFromScratch(net, request); });
  // Invariant: the planner's lower bound is a pure function of the net.
  CHECK_EQ(bound, plan.lower_bound_bytes()) << row.name() << ": the bound differs when recomputed";
  r.naive = plan.naive_bytes();
  r.planned = plan.arena_bytes();
  r.bound = plan.lower_bound_bytes();
  r.recycled = RecycledBlobCount(plan);
  const std::string error = VerifyMemoryPlan(net, request, plan);
  r.verify = error.empty() ? "ok" : error;
  return r;
}

double Ratio(int64_t num, int64_t den) {
  return den == 0 ? (num == 0 ? 1.0 : 0.0) : static_cast<double>(num) / static_cast<double>(den);
}

// Which targets the row misses ("" when it meets every one that applies to it).
std::string MissedTargets(const Row& row, const RowResult& r) {
  std::string missed;
  if (Ratio(r.planned, r.bound) > kMaxPlannedOverBound) missed += " plan/bound";
  if (row.model->model == "resnet50" && row.training) {
    if (r.plan_ms > kMaxResNet50TrainPlanMs) missed += " plan-ms";
    if (1 - Ratio(r.planned, r.naive) < kMinResNet50TrainSaved) missed += " saved";
  }
  if (r.verify != "ok") missed += " verify";
  return missed;
}

double MiB(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

void PrintHeader() {
  std::printf("%-22s %-6s %11s %11s %11s %10s %7s %7s %9s %9s %6s  %s\n", "row", "exec",
              "naive MiB", "planned MiB", "bound MiB", "plan/bound", "saved%", "blobs", "plan ms",
              "bound ms", "verify", "targets");
}

// Prints the row; returns whether it meets its targets.
bool PrintRow(const Row& row, const RowResult& r) {
  const std::string missed = MissedTargets(row, r);
  std::printf("%-22s %-6s %11.2f %11.2f %11.2f %10.4f %6.1f%% %7d %9.3f %9.3f %6s  %s\n",
              row.name().c_str(), row.executor_name(), MiB(r.naive), MiB(r.planned), MiB(r.bound),
              Ratio(r.planned, r.bound), 100 * (1 - Ratio(r.planned, r.naive)), r.recycled,
              r.plan_ms, r.bound_ms, r.verify == "ok" ? "ok" : "FAIL",
              missed.empty() ? "met" : ("MISSED:" + missed).c_str());
  if (r.verify != "ok") std::fprintf(stderr, "%s: %s\n", row.name().c_str(), r.verify.c_str());
  std::fflush(stdout);
  return missed.empty();
}

bool Selected(const std::string& name) {
  if (FLAGS_rows.empty()) return true;
  size_t start = 0;
  while (start <= FLAGS_rows.size()) {
    const size_t end = std::min(FLAGS_rows.find(',', start), FLAGS_rows.size());
    const std::string piece = FLAGS_rows.substr(start, end - start);
    if (!piece.empty() && name.find(piece) != std::string::npos) return true;
    start = end + 1;
  }
  return false;
}

// Plans every selected row of `model`; returns {rows run, rows meeting their targets}.
std::pair<int, int> RunModel(const PlannerModel& model) {
  std::vector<Row> rows;
  for (bool training : {true, false}) {
    for (PlanExecutor executor : {PlanExecutor::kDag, PlanExecutor::kSimple}) {
      Row row{&model, training, executor};
      if (Selected(row.name())) rows.push_back(row);
    }
  }
  if (rows.empty()) return {0, 0};
  const TrainingNets nets = BuildPlannerNets(model);
  Workspace ws;  // the init net's parameters give the shapes; nothing else runs
  const Status init = ws.RunNetOnce(nets.params.init_net);
  if (!init.ok()) throw Error(init);
  int met = 0;
  for (const Row& row : rows) met += PrintRow(row, PlanRow(row, nets, ws)) ? 1 : 0;
  return {static_cast<int>(rows.size()), met};
}

void RunBench() {
  std::printf(
      "memory planner: %d planning runs per row (median times); training rows share "
      "gradients and activations\n",
      FLAGS_repeats);
  PrintHeader();
  int rows = 0, met = 0;
  for (const PlannerModel& model : PlannerModels()) {
    const auto [model_rows, model_met] = RunModel(model);
    rows += model_rows;
    met += model_met;
  }
  std::printf(
      "\ntargets: planned <= %.2f x bound on every row; resnet50 training planned in <= "
      "%.0f ms with >= %.0f%% of activations+gradients saved against naive\n",
      kMaxPlannedOverBound, kMaxResNet50TrainPlanMs, 100 * kMinResNet50TrainSaved);
  std::printf("%d of %d rows meet every target that applies to them\n", met, rows);
}

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  const std::vector<std::string> positional =
      braid::ParseCommandLine(argc, argv, "braid_bench_planner [--rows SUBSTR,...] [--repeats 5]");
  if (!positional.empty() || FLAGS_repeats < 1) {
    std::cerr << "braid_bench_planner: "
              << (positional.empty() ? "--repeats must be >= 1"
                                     : "unexpected argument '" + positional[0] + "'")
              << "\n";
    return braid::kExitBadFlags;
  }
  const braid::Status status = braid::StatusFromCall([] { braid::bench::RunBench(); });
  std::cout.flush();
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 1;
  }
  return 0;
}
