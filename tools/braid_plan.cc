// braid_plan: plans a net's memory offline and reports how well the plan packs.
//
//   braid_plan NET [--init INIT_NET] [--input NAME=DIMS[:DTYPE]]... [--gradients-of LOSS]...
//              [--mode inference|training] [--share-activations] [--share-parameter-gradients]
//              [--executor dag|simple] [--out PLANNED_NET] [--json FILE] [--noverify] [--reorder] [--test-net TEST_NET]
//
// `braid_plan --model-dir DIR [flags as above, no --init]` plans the predict net of a model folder
// in the layout of Caffe2's model zoo (runtime/io/model_folder.h): its init net gives the weights'
// shapes and value_info.json the inputs', unless an --input names one (e.g. another batch).
//
// Loads NET (text or binary NetDef), appends its backward pass for each --gradients-of loss
// (runtime/core/autodiff.h), runs INIT_NET in a workspace and creates each --input blob there
// (float32 unless DTYPE says otherwise, e.g. "data=64,1,28,28" or "label=64:int32"), so that
// shape inference (runtime/core/shape_inference.h) sizes the net's blobs. It then builds the
// planner's request the way the runtime does (PlanRequestFor), plans (PlanMemory), proves the plan
// with the independent checker (VerifyMemoryPlan, unless --noverify) and prints naive, planned and
// lower-bound bytes, planned/bound, recycled blob counts, arenas, and the planning and
// verification times (planning time is PlanMemory alone).
//
// --mode defaults to training when --gradients-of is given, else inference; --executor defaults to
// NET's type ("simple" stays simple, anything else plans for dag). --out writes the renamed net
// (planner/renaming.h: blobs that may share storage share one name, for runtimes without arenas),
// checked with VerifyRenamedNet, binary for .pb/.bin paths and text otherwise
// (runtime/io/proto_io.h). --json writes tools/plan_json.h's schema; with several devices each
// blob's offset is within its own device's arena and the byte totals sum over arenas.
//
// --reorder (simple executor only) first reorders NET's ops for memory (planner/reorder.h) and
// prints the arena before and after; the reordered net is what is planned and written.
// --test-net plans TEST_NET (a net run between runs of NET, reading its parameters, e.g. a test
// net) in inference mode and prints its extra bytes without sharing (its own arenas) and with
// NET's arenas shared (only what exceeds NET's arena on each device).
//
// Footprint before running: `braid_plan --model NAME --device sim|cuda --batch-size N
// [--test-batch-size M] [--image-size S] [--channels C] [--classes K] [--algo-cache PATH]
// [--recompute-budget SIZE] [--json FILE]` (no NET) builds the model's training nets as
// braid_train builds them (runtime/models/training_footprint.h) and prints each device's
// predicted footprint: parameters, gradients outside the arena, momentum, the planned arena, the
// workspace cap (the largest workspace of the algorithms in --algo-cache), allocator rounding and
// the total, as the device's caching allocator will hold them; --json writes the same
// (tools/footprint_report.h).
// --recompute-budget SIZE recomputes convolutions in the backward pass until the planned train
// arena fits SIZE, as braid_train --recompute-budget does, and prints the arena with and without.
//
// Exit codes: 0 success, 1 a failure (a bad net, shape, plan or file: one stderr line naming the
// net, op and blob), 2 bad flags.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "braid/status.h"
#include "planner/memory_plan.h"
#include "planner/renaming.h"
#include "planner/reorder.h"
#include "planner/verify_plan.h"
#include "runtime/core/autodiff.h"
#include "runtime/core/workspace.h"
#include "runtime/device/algorithm_registry.h"
#include "runtime/exec/init_net.h"
#include "runtime/exec/memory_planning.h"
#include "runtime/exec/observer.h"
#include "runtime/io/model_folder.h"
#include "runtime/io/proto_io.h"
#include "runtime/models/training_footprint.h"
#include "tools/blob_spec.h"
#include "tools/command_line.h"
#include "tools/footprint_report.h"
#include "tools/plan_json.h"
#include "tools/plan_summary.h"
#include "tools/repeated_flag.h"

DEFINE_string(init, "", "init net run once before planning; its blobs give parameter shapes");
DEFINE_string(model_dir, "",
              "plan the predict net of this model folder (init_net.pb, predict_net.pb, "
              "value_info.json) instead of NET");
DEFINE_string(input, "",
              "NAME=DIMS[:DTYPE], repeatable: a blob of that shape (float32 unless DTYPE: "
              "float32|float64|int32|int64|uint8|bool), e.g. data=64,1,28,28 label=64:int32");
DEFINE_string(gradients_of, "", "LOSS, repeatable: append the backward pass of LOSS first");
DEFINE_string(mode, "", "inference or training (default: training with --gradients-of)");
DEFINE_bool(share_activations, false, "training mode: recycle activations as well as gradients");
DEFINE_bool(share_parameter_gradients, false,
            "recycle parameters' gradients too (garbage after a run; the optimizer must be in NET)");
DEFINE_string(executor, "", "dag or simple (default: NET's type; dag unless it says simple)");
DEFINE_string(out, "",
              "write the renamed net (shared blob names) here: .pb/.bin binary, else text");
DEFINE_string(json, "",
              "write the plan as JSON here; with several devices, offsets are per device arena");
DEFINE_bool(verify, true, "prove the plan (and --out's net) with the independent checker");
DEFINE_bool(reorder, false, "simple executor: reorder the ops for memory before planning");
DEFINE_string(test_net, "",
              "a net run between runs of NET (a test net): report its extra bytes with and "
              "without sharing NET's arenas");

DEFINE_string(model, "", "footprint: a braid_model model name (resnet20, resnet50, ...) instead of NET");
DEFINE_string(device, "sim:0", "footprint: the device the model trains on (sim, sim:N, cuda, cuda:N)");
DEFINE_int64(batch_size, 32, "footprint: training batch size");
DEFINE_int64(test_batch_size, 0, "footprint: test batch size (0: the training batch)");
DEFINE_int64(image_size, 0, "footprint: image size (0: braid_model's default)");
DEFINE_int64(channels, 0, "footprint: image channels (0: braid_model's default)");
DEFINE_int64(classes, 0, "footprint: classes (0: braid_model's default)");
DEFINE_string(recompute_budget, "",
              "footprint: also recompute, in the backward pass, convolutions chosen by planning "
              "to bring each device's planned train arena within this size (e.g. 1.2G; "
              "runtime/models/training_footprint.h); prints the arena with and without");
DEFINE_string(algo_cache, "", "footprint: algorithm choices (braid_train --algo-cache) for the workspace cap");

namespace braid {
namespace {

constexpr char kUsage[] =
    "braid_plan NET [--init INIT_NET] [--input NAME=DIMS[:DTYPE]]... [--gradients-of LOSS]... "
    "[--mode inference|training] [--share-activations] [--share-parameter-gradients] "
    "[--executor dag|simple] "
    "[--out PLANNED_NET] [--json FILE] [--noverify] [--reorder] [--test-net TEST_NET]\n"
    "braid_plan --model-dir DIR [the flags above but --init]\n"
    "braid_plan --model NAME --device sim|cuda --batch-size N [--test-batch-size M] "
    "[--image-size S] [--channels C] [--classes K] [--algo-cache PATH] [--json FILE]";

struct PlanToolOptions {
  std::string net_path, init_path, model_dir, out_path, json_path;
  std::vector<BlobSpec> inputs;
  std::vector<std::string> losses;
  PlanMode mode = PlanMode::kInference;
  bool share_activations = false;
  bool share_parameter_gradients = false;
  std::string executor;  // "" = from the net
  bool verify = true;
  bool reorder = false;
  std::string test_net_path;
};

[[noreturn]] void ExitBadFlags(const std::string& message) {
  std::cerr << "braid_plan: " << message << "\n";
  std::exit(kExitBadFlags);
}

PlanMode ModeFromFlag(bool has_losses) {
  if (FLAGS_mode.empty()) return has_losses ? PlanMode::kTraining : PlanMode::kInference;
  if (FLAGS_mode == "inference") return PlanMode::kInference;
  if (FLAGS_mode == "training") return PlanMode::kTraining;
  ExitBadFlags("--mode must be 'inference' or 'training', got '" + FLAGS_mode + "'");
}

PlanToolOptions ParseFlags(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  std::vector<std::string> inputs, losses;
  std::string error;
  if (!TakeRepeatedFlag("input", &args, &inputs, &error) ||
      !TakeRepeatedFlag("gradients_of", &args, &losses, &error)) {
    ExitBadFlags(error);
  }
  std::vector<char*> rest;
  for (std::string& arg : args) rest.push_back(arg.data());
  const std::vector<std::string> nets =
      ParseCommandLine(static_cast<int>(rest.size()), rest.data(), kUsage);
  PlanToolOptions options;
  if (!FLAGS_executor.empty() && FLAGS_executor != "dag" && FLAGS_executor != "simple") {
    ExitBadFlags("--executor must be 'dag' or 'simple', got '" + FLAGS_executor + "'");
  }
  const Status budget = StatusFromCall(
      [] { return ParseBudget(FLAGS_recompute_budget, "--recompute-budget"); });
  if (!budget.ok()) ExitBadFlags(budget.message());
  if (!FLAGS_model.empty()) {
    if (!nets.empty()) ExitBadFlags("--model takes no NET file");
    if (FLAGS_batch_size <= 0 || FLAGS_test_batch_size < 0) ExitBadFlags("batch sizes must be > 0");
    return options;
  }
  if (!FLAGS_recompute_budget.empty()) {
    ExitBadFlags("--recompute-budget is for --model (a NET file's recomputation is its own)");
  }
  if (!FLAGS_model_dir.empty()) {
    if (!nets.empty()) ExitBadFlags("--model-dir takes no NET file, got '" + nets[0] + "'");
    if (!FLAGS_init.empty()) ExitBadFlags("--init: a model folder carries its own init net");
    options.model_dir = FLAGS_model_dir;
  } else if (nets.size() != 1) {
    ExitBadFlags("expected exactly one NET file, got " + std::to_string(nets.size()) +
                 " (braid_plan --help lists the flags)");
  } else {
    options.net_path = nets[0];
  }
  options.init_path = FLAGS_init;
  options.out_path = FLAGS_out;
  options.json_path = FLAGS_json;
  for (const std::string& spec : inputs) {
    options.inputs.push_back(ParseBlobSpec(spec, &error));
    if (!error.empty()) ExitBadFlags("--input " + error);
  }
  options.losses = losses;
  options.mode = ModeFromFlag(!losses.empty());
  options.share_activations = FLAGS_share_activations;
  options.share_parameter_gradients = FLAGS_share_parameter_gradients;
  options.executor = FLAGS_executor;
  options.verify = FLAGS_verify;
  options.reorder = FLAGS_reorder;
  if (options.reorder && FLAGS_executor != "simple") {
    ExitBadFlags("--reorder needs --executor simple (the dag executor ignores listed order)");
  }
  options.test_net_path = FLAGS_test_net;
  return options;
}

void ThrowIfError(const Status& status) {
  if (!status.ok()) throw Error(status);
}

// The net to plan: loaded (NET, or --model-dir's predict net with the folder kept in *folder),
// named, with its backward pass and its executor type set.
NetDef LoadNetToPlan(const PlanToolOptions& options, ModelFolder* folder) {
  NetDef net;
  if (options.model_dir.empty()) {
    net = LoadNetDef(options.net_path);
  } else {
    ThrowIfError(LoadModelFolder(options.model_dir, folder));
    net = folder->predict_net;
  }
  if (net.name().empty()) {
    net.set_name(options.model_dir.empty() ? options.net_path : options.model_dir);
  }
  if (!options.losses.empty()) AddGradientOperators(&net, options.losses);
  std::string executor = options.executor;
  if (executor.empty()) executor = net.type() == "simple" ? "simple" : "dag";
  net.set_type(executor);
  return net;
}

// Runs the init net (--init or the folder's) and creates each input blob: --input's, and the
// folder's inputs in value_info.json's shapes unless an --input names them.
void FillWorkspace(const PlanToolOptions& options, const ModelFolder& folder, Workspace* ws) {
  if (!options.init_path.empty()) ThrowIfError(ws->RunNetOnce(LoadNetDef(options.init_path)));
  std::vector<BlobSpec> inputs = options.inputs;
  if (!options.model_dir.empty()) {
    ThrowIfError(RunInitNet(folder.init_net, ws));
    for (const ValueInfo& model_input : folder.inputs) {
      const bool named = std::any_of(inputs.begin(), inputs.end(), [&](const BlobSpec& spec) {
        return spec.name == model_input.name;
      });
      if (!named) inputs.push_back({model_input.name, model_input.shape, model_input.dtype});
    }
  }
  for (const BlobSpec& input : inputs) {
    Tensor* tensor = ws->CreateBlob(input.name);
    tensor->Resize(input.dtype, input.dims);
    tensor->raw_mutable_data(input.dtype);  // shape inference knows only blobs that hold data
    if (folder.FindInput(input.name) != nullptr) {
      std::printf("model input '%s' %s\n", input.name.c_str(), tensor->ShapeString().c_str());
    }
  }
}

const char* ModeName(PlanMode mode) {
  return mode == PlanMode::kTraining ? "training" : "inference";
}

std::string ByteRow(const char* label, int64_t bytes) {
  char row[96];
  std::snprintf(row, sizeof(row), "  %-12s %15lld B  %12s\n", label, static_cast<long long>(bytes),
                HumanBytes(bytes).c_str());
  return row;
}

void PrintArenas(const MemoryPlan& plan) {
  if (plan.arenas.size() < 2) return;
  for (size_t i = 0; i < plan.arenas.size(); ++i) {
    const ArenaPlan& arena = plan.arenas[i];
    std::printf("  arena %zu (device type %d id %d): %zu blobs, naive %s, planned %s, bound %s\n",
                i, arena.device.device_type(), arena.device.device_id(), arena.blobs.size(),
                HumanBytes(arena.naive_bytes).c_str(), HumanBytes(arena.arena_bytes).c_str(),
                HumanBytes(arena.lower_bound_bytes).c_str());
  }
}

// Blobs the net writes that shape inference could not size: they keep their own storage.
void PrintUnsized(const NetDef& net, const PlanRequest& request) {
  std::set<std::string> unsized;
  for (const OperatorDef& op : net.op()) {
    for (const std::string& out : op.output()) {
      if (request.blob_bytes.count(out) == 0) unsized.insert(out);
    }
  }
  if (unsized.empty()) return;
  std::string names;
  int listed = 0;
  for (auto it = unsized.begin(); it != unsized.end() && listed < 5; ++it, ++listed) {
    names += (names.empty() ? "'" : ", '") + *it + "'";
  }
  std::printf(
      "note: %zu blobs the net writes have no size from shape inference and keep their own "
      "storage (%s%s); --init and --input give the shapes they depend on\n",
      unsized.size(), names.c_str(), unsized.size() > 5 ? ", ..." : "");
}

void PrintReport(const NetDef& net, const PlanToolOptions& options, const PlanRequest& request,
                 const MemoryPlan& plan, double plan_ms) {
  const bool shared = options.mode == PlanMode::kTraining && options.share_activations;
  std::printf("net '%s': %d ops, mode %s%s, executor %s\n", net.name().c_str(), net.op_size(),
              ModeName(options.mode), shared ? " (activations shared)" : "", net.type().c_str());
  std::printf("blobs: %d in the net, %zu sized by shape inference, %d recycled in %zu arena%s\n",
              DistinctBlobCount(net), request.blob_bytes.size(), RecycledBlobCount(plan),
              plan.arenas.size(), plan.arenas.size() == 1 ? "" : "s");
  std::cout << ByteRow("naive", plan.naive_bytes()) << ByteRow("planned", plan.arena_bytes())
            << ByteRow("lower bound", plan.lower_bound_bytes());
  const double saved = plan.naive_bytes() > 0
                           ? 100.0 * (1.0 - static_cast<double>(plan.arena_bytes()) /
                                                static_cast<double>(plan.naive_bytes()))
                           : 0.0;
  std::printf("  planned/bound %.4f, %.1f%% below naive\n", PlannedOverBound(plan), saved);
  PrintArenas(plan);
  PrintUnsized(net, request);
  std::printf("plan time: %.3f ms (PlanMemory)\n", plan_ms);
}

// Proves the plan; prints the result and its time, and throws when it fails.
void VerifyAndReport(const NetDef& net, const PlanRequest& request, const MemoryPlan& plan) {
  const int64_t start = NowNanos();
  const std::string error = VerifyMemoryPlan(net, request, plan);
  const double ms = (NowNanos() - start) / 1e6;
  if (!error.empty()) {
    std::printf("verification: FAILED in %.3f ms\n", ms);
    throw Error(Status::Internal("net '" + net.name() + "': plan failed verification: " + error));
  }
  std::printf("verification: OK in %.3f ms (VerifyMemoryPlan)\n", ms);
}

void WriteRenamedNet(const NetDef& net, const PlanRequest& request,
                     const PlanToolOptions& options) {
  const NetDef renamed = RenameSharedBlobs(net, request);
  if (options.verify) {
    const std::string error = VerifyRenamedNet(net, renamed);
    if (!error.empty()) {
      throw Error(
          Status::Internal("net '" + net.name() + "': renamed net failed verification: " + error));
    }
  }
  SaveProto(renamed, options.out_path);
  std::printf("renamed net written to %s%s\n", options.out_path.c_str(),
              options.verify ? " (VerifyRenamedNet: OK)" : "");
}

// Reorders `net` for the simple executor and reports the arena before and after.
void Reorder(const Workspace& ws, const MemoryPlanOptions& planning, NetDef* net,
             PlanRequest* request) {
  const int64_t before = PlanMemory(*net, *request).arena_bytes();
  *net = ReorderForMemory(*net, *request);
  *request = PlanRequestFor(*net, ws, planning);
  request->executor = PlanExecutor::kSimple;
  std::printf("reordered for the simple executor: planned %s before, %s after\n",
              HumanBytes(before).c_str(),
              HumanBytes(PlanMemory(*net, *request).arena_bytes()).c_str());
}

// Plans the test net alone and against `plan`'s arenas; prints its extra bytes both ways.
void ReportTestNet(const std::string& path, const Workspace& ws, const MemoryPlan& plan) {
  NetDef test = LoadNetDef(path);
  if (test.name().empty()) test.set_name(path);
  const MemoryPlan test_plan = PlanMemory(test, PlanRequestFor(test, ws, {}));
  int64_t shared_extra = 0;
  for (const ArenaPlan& arena : test_plan.arenas) {
    int64_t lent = 0;
    for (const ArenaPlan& mine : plan.arenas) {
      if (mine.device.SerializeAsString() == arena.device.SerializeAsString())
        lent = mine.arena_bytes;
    }
    shared_extra += std::max<int64_t>(0, arena.arena_bytes - lent);
  }
  const int64_t alone = test_plan.arena_bytes();
  std::printf(
      "test net '%s': extra bytes without sharing %s, with the arenas shared %s (%.1f%% less)\n",
      test.name().c_str(), HumanBytes(alone).c_str(), HumanBytes(shared_extra).c_str(),
      alone > 0 ? 100.0 * (1.0 - static_cast<double>(shared_extra) / alone) : 0.0);
}

void PlanAndReport(const PlanToolOptions& options) {
  ModelFolder folder;
  NetDef net = LoadNetToPlan(options, &folder);
  Workspace ws;
  FillWorkspace(options, folder, &ws);
  MemoryPlanOptions planning;
  planning.mode = options.mode;
  planning.share_activations = options.share_activations;
  planning.share_parameter_gradients = options.share_parameter_gradients;
  PlanRequest request = PlanRequestFor(net, ws, planning);
  request.executor = net.type() == "simple" ? PlanExecutor::kSimple : PlanExecutor::kDag;
  if (options.reorder) Reorder(ws, planning, &net, &request);

  const int64_t start = NowNanos();
  const MemoryPlan plan = PlanMemory(net, request);
  const double plan_ms = (NowNanos() - start) / 1e6;
  PrintReport(net, options, request, plan, plan_ms);
  if (options.verify) {
    VerifyAndReport(net, request, plan);
  } else {
    std::printf("verification: skipped (--noverify)\n");
  }
  if (!options.out_path.empty()) WriteRenamedNet(net, request, options);
  if (!options.json_path.empty()) {
    WritePlanJson({&net, ModeName(options.mode), net.type(), &plan, plan_ms}, options.json_path);
    std::printf("plan JSON written to %s\n", options.json_path.c_str());
  }
  if (!options.test_net_path.empty()) ReportTestNet(options.test_net_path, ws, plan);
}

// The largest workspace among the algorithm choices in `path` ("" : none known, 0).
int64_t WorkspaceCap(const std::string& path) {
  if (path.empty()) return 0;
  AlgorithmRegistry registry;
  ThrowIfError(registry.Load(path));
  int64_t cap = 0;
  for (const auto& [key, choice] : registry.Entries()) cap = std::max(cap, choice.workspace_bytes);
  return cap;
}

void FootprintAndReport() {
  FootprintModel model;
  model.model = FLAGS_model;
  model.batch = FLAGS_batch_size;
  model.test_batch = FLAGS_test_batch_size;
  model.image_size = FLAGS_image_size;
  model.channels = FLAGS_channels;
  model.classes = FLAGS_classes;
  std::string device = FLAGS_device;
  if (device.find(':') == std::string::npos) device += ":0";
  model.device = DeviceToProto(ParseDevice(device));
  model.recompute_budget = ParseBudget(FLAGS_recompute_budget, "--recompute-budget");
  if (!FLAGS_executor.empty()) model.executor = FLAGS_executor;
  RecomputeBudgetReport recompute;
  const TrainingNets nets = BuildFootprintNets(model, &recompute);
  FootprintOptions options;
  options.workspace_cap = WorkspaceCap(FLAGS_algo_cache);
  const std::vector<DeviceFootprint> footprint = PredictTrainingFootprint(nets, options);
  std::printf("%s batch %lld (test batch %lld) on %s, memory plan as braid_train's\n",
              model.model.c_str(), static_cast<long long>(model.batch),
              static_cast<long long>(model.test_batch > 0 ? model.test_batch : model.batch),
              device.c_str());
  if (recompute.budget_bytes > 0) {
    const auto mib = [](int64_t bytes) { return bytes / 1048576.0; };
    std::printf("recompute budget %.2f MiB: planned train arena %.2f MiB without recomputed "
                "convolutions, %.2f MiB with %d of %d recomputed%s\n",
                mib(recompute.budget_bytes), mib(recompute.arena_without_bytes),
                mib(recompute.arena_bytes), recompute.convs, recompute.candidates,
                recompute.met ? "" : " (over the budget: the least the recomputation reached)");
  }
  std::cout << FootprintTable(footprint);
  if (!FLAGS_json.empty()) {
    std::ofstream(FLAGS_json) << FootprintJson(footprint);
    std::printf("footprint JSON written to %s\n", FLAGS_json.c_str());
  }
}

}  // namespace
}  // namespace braid

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  const braid::PlanToolOptions options = braid::ParseFlags(argc, argv);
  if (!FLAGS_model.empty()) return braid::RunTool("braid_plan", [] { braid::FootprintAndReport(); });
  return braid::RunTool("braid_plan", [&] { braid::PlanAndReport(options); });
}
