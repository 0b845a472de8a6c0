// braid_bench_inference: latency, images/s and memory of one model's inference, as braid serves it.
//
//   braid_bench_inference MODEL.onnx [--threads 2] [--executor simple|dag] [--warmup 3]
//                         [--min_iters 10] [--min_seconds 5] [--max_iters 1000] [--json]
//   braid_bench_inference --model_dir DIR [same flags]
//
// One model per process, so the peak RSS is this model's alone. The process reads its resident
// set size before anything is loaded, imports the model with the library's own calls
// (runtime/io/onnx/onnx_import.h, or a zoo folder, runtime/io/model_folder.h; the batch is the
// model's input shape), runs its init net, feeds uniform [-1, 1) input (seed 0), folds batch norms
// into Convs and fuses their Sum/Add and Relu/Clip (runtime/models/optimize_inference.h;
// --optimize_graph), keeps the activations
// between oneDNN ops in oneDNN's blocked layout (runtime/models/blocked_layouts.h;
// --blocked_layouts), stores the Conv filters once in the layout oneDNN reads
// (runtime/models/pack_parameters.h; --pack_parameters), as the Predictor does, plans the predict
// net's memory into one arena (runtime/exec/memory_planning.h, inference mode), runs
// --warmup untimed iterations (the first searches Conv's algorithms and creates oneDNN's
// primitives), then timed iterations until --min_iters and --min_seconds are both reached (or
// --max_iters). It reports per-iteration latency (median and 90th percentile), batch / median as
// images/s, and memory:
//   rss_before_load  resident bytes once the libraries are loaded, before the model is;
//   peak_rss         the process's peak resident bytes (VmHWM), everything included;
//   peak_rss - rss_before_load: what loading and running the model added (its parameters, the
//                    arena, oneDNN's primitives and scratch, the allocator's slack);
//   param_bytes      the blobs the init net made (each storage once); arena, lower_bound and
//                    naive: the planned arena, the planner's lower bound for it and every
//                    recycled blob in its own storage; scratch: the net's scratch areas.
//
// Threads: --threads N is OMP_NUM_THREADS (oneDNN's and the elementwise kernels' OpenMP teams) and
// OPENBLAS_NUM_THREADS (FC); both are read when the libraries load, so when the environment does
// not already say N the binary sets them and re-executes itself (tools/thread_environment.h), with
// GOMP_SPINCOUNT=1000 unless the environment sets it (bounded spinning: the latency beside busy
// processes). With --executor dag, N is also
// the number of dag workers (ops that may run side by side then share the N cores,
// runtime/exec/intra_op_threads.h). The default, simple (one op at a time, each with N OpenMP
// threads), was the faster on the torchvision models on 2 cores (tools/bench/inference_torchvision.py).
//
// Output: a report, or with --json one line "result {...}" for tools/bench/inference_torchvision.py.
// Exit codes: 0 success, 1 the model failed to load or run, 2 bad flags.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "braid/status.h"
#include "runtime/core/argument.h"
#include "runtime/core/shape_inference.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/init_net.h"
#include "runtime/exec/memory_planning.h"
#include "runtime/exec/net.h"
#include "runtime/exec/net_args.h"
#include "runtime/io/model_folder.h"
#include "runtime/io/onnx/onnx_import.h"
#include "runtime/models/blocked_layouts.h"
#include "runtime/models/optimize_inference.h"
#include "runtime/models/pack_parameters.h"
#include "tools/bench/process_stats.h"
#include "tools/command_line.h"
#include "tools/model_input.h"
#include "tools/thread_environment.h"

DEFINE_string(model_dir, "", "a model folder in the layout of Caffe2's model zoo instead of MODEL");
DEFINE_int32(threads, 2, "OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and, for dag, its workers");
DEFINE_string(executor, "simple", "simple or dag");
DEFINE_int32(warmup, 3, "untimed iterations (the first searches algorithms)");
DEFINE_int32(min_iters, 10, "timed iterations, at least");
DEFINE_int32(max_iters, 1000, "timed iterations, at most");
DEFINE_double(min_seconds, 5, "timed seconds, at least (unless --max_iters)");
DEFINE_bool(memory_plan, true, "bind the recyclable blobs into one planned arena");
DEFINE_bool(blocked_layouts, true,
            "keep activations between oneDNN ops blocked (runtime/models/blocked_layouts.h)");
DEFINE_bool(
    optimize_graph, true,
    "fold inference SpatialBN ops into the Convs before them and Sum/Add and Relu/Clip ops into "
    "the Convs' primitives (runtime/models/optimize_inference.h), as the Predictor does");
DEFINE_bool(pack_parameters, true,
            "store Conv filters once in the layout oneDNN reads (runtime/models/pack_parameters.h)");
DEFINE_bool(json, false, "print one 'result {...}' JSON line instead of the report");

namespace braid::bench {
namespace {

struct InferenceResult {
  std::string input_shape;
  int64_t batch = 0;
  int ops = 0;
  int iterations = 0;
  double median_ms = 0;
  double p90_ms = 0;
  double images_per_second = 0;
  double setup_seconds = 0;  // import, init net, planning and warm-up
  int64_t rss_before_load = 0;
  int64_t peak_rss = 0;
  int64_t param_bytes = 0;
  int64_t arena_bytes = 0;
  int64_t lower_bound_bytes = 0;
  int64_t naive_bytes = 0;
  int64_t scratch_bytes = 0;
  InferenceRewrites rewrites;
  int blocked_blobs = 0;
  int packed_parameters = 0;
};

void ThrowIfError(const Status& status) {
  if (!status.ok()) throw Error(status);
}

ModelFolder LoadModel(const std::string& path) {
  ModelFolder model;
  if (!FLAGS_model_dir.empty()) {
    ThrowIfError(LoadModelFolder(FLAGS_model_dir, &model));
    return model;
  }
  ThrowIfError(ImportOnnxFile(path, OnnxImportOptions{}, &model));
  return model;
}

// The blobs `init` makes.
std::set<std::string> OutputsOf(const NetDef& init) {
  std::set<std::string> made;
  for (const OperatorDef& op : init.op()) made.insert(op.output().begin(), op.output().end());
  return made;
}

// Bytes of the blobs `made` in `ws`, each storage counted once.
int64_t ParamBytes(const Workspace& ws, const std::set<std::string>& made) {
  std::set<const void*> counted;
  int64_t bytes = 0;
  for (const std::string& name : made) {
    const Tensor* tensor = ws.GetBlob(name);
    if (tensor == nullptr || !tensor->storage()) continue;
    if (counted.insert(tensor->storage().get()).second) bytes += tensor->capacity();
  }
  return bytes;
}


std::vector<double> TimeIterations(Net* net) {
  std::vector<double> ms;
  double total_ms = 0;
  while (static_cast<int>(ms.size()) < FLAGS_max_iters &&
         (static_cast<int>(ms.size()) < FLAGS_min_iters || total_ms < FLAGS_min_seconds * 1e3)) {
    const int64_t start = NowNanos();
    ThrowIfError(net->Run());
    ms.push_back((NowNanos() - start) / 1e6);
    total_ms += ms.back();
  }
  return ms;
}

// The predict net ready to run in `ws`: init net run, input fed, layouts chosen, executor set.
NetDef PrepareModel(const std::string& path, Workspace* ws, InferenceResult* r) {
  ModelFolder model = LoadModel(path);
  const std::set<std::string> parameters = OutputsOf(model.init_net);
  ThrowIfError(RunInitNet(std::move(model.init_net), ws));
  r->param_bytes = ParamBytes(*ws, parameters);
  if (model.inputs.size() != 1) {
    throw Error(Status::InvalidArgument("braid_bench_inference measures models with one input"));
  }
  const ValueInfo& info = model.inputs[0];
  const Tensor input = MakeInputTensor(ModelInput{info.name, ""}, info.dtype, info.shape);
  ws->CreateBlob(info.name)->CopyFrom(input);
  r->input_shape = input.ShapeString();
  r->batch = info.shape.empty() ? 1 : info.shape[0];
  NetDef def = std::move(model.predict_net);
  if (FLAGS_optimize_graph) {
    r->rewrites = OptimizeInferenceNet(&def, parameters, ws);
  }
  if (FLAGS_blocked_layouts) {
    r->blocked_blobs = UseBlockedLayouts(&def, ShapesOfWorkspaceBlobs(def, *ws));
  }
  if (FLAGS_pack_parameters) {
    r->packed_parameters = static_cast<int>(PackParameters(def, parameters, ws).size());
  }
  def.set_type(FLAGS_executor);
  SetNetIntArg(&def, kNumWorkersArg, FLAGS_threads);
  if (def.name().empty()) def.set_name("predict");
  return def;
}

InferenceResult Measure(const std::string& path) {
  InferenceResult r;
  r.rss_before_load = ProcStatusBytes("VmRSS:");
  const int64_t setup_start = NowNanos();
  Workspace ws;
  Net* net = ws.CreateNet(PrepareModel(path, &ws, &r));
  r.ops = net->num_ops();
  std::unique_ptr<NetMemory> memory;
  if (FLAGS_memory_plan) {
    memory = PlanNetMemory(*net, &ws, MemoryPlanOptions{});
    r.arena_bytes = memory->allocated_bytes();
    r.lower_bound_bytes = memory->plan().lower_bound_bytes();
    r.naive_bytes = memory->plan().naive_bytes();
  }
  for (int i = 0; i < FLAGS_warmup; ++i) ThrowIfError(net->Run());
  r.setup_seconds = (NowNanos() - setup_start) / 1e9;
  const std::vector<double> ms = TimeIterations(net);
  r.iterations = static_cast<int>(ms.size());
  r.median_ms = Quantile(ms, 0.5);
  r.p90_ms = Quantile(ms, 0.9);
  r.images_per_second = r.batch / (r.median_ms / 1e3);
  r.scratch_bytes = static_cast<int64_t>(net->scratch_bytes());
  r.peak_rss = ProcStatusBytes("VmHWM:");
  return r;
}

void PrintJson(const InferenceResult& r) {
  std::printf(
      "result {\"input_shape\": \"%s\", \"batch\": %lld, \"ops\": %d, \"executor\": \"%s\", "
      "\"threads\": %d, \"folded_batch_norms\": %d, \"fused_sums\": %d, "
      "\"fused_activations\": %d, "
      "\"blocked_blobs\": %d, "
      "\"packed_parameters\": %d, "
      "\"iterations\": %d, \"median_ms\": %.4f, "
      "\"p90_ms\": %.4f, \"images_per_second\": %.4f, \"setup_seconds\": %.3f, "
      "\"rss_before_load\": %lld, \"peak_rss\": %lld, \"param_bytes\": %lld, "
      "\"arena_bytes\": %lld, \"lower_bound_bytes\": %lld, \"naive_bytes\": %lld, "
      "\"scratch_bytes\": %lld}\n",
      r.input_shape.c_str(), static_cast<long long>(r.batch), r.ops, FLAGS_executor.c_str(),
      FLAGS_threads, r.rewrites.folded_batch_norms, r.rewrites.fused_sums,
      r.rewrites.fused_activations, r.blocked_blobs,
      r.packed_parameters, r.iterations,
      r.median_ms, r.p90_ms, r.images_per_second,
      r.setup_seconds, static_cast<long long>(r.rss_before_load),
      static_cast<long long>(r.peak_rss), static_cast<long long>(r.param_bytes),
      static_cast<long long>(r.arena_bytes), static_cast<long long>(r.lower_bound_bytes),
      static_cast<long long>(r.naive_bytes), static_cast<long long>(r.scratch_bytes));
}

void PrintReport(const InferenceResult& r) {
  const auto mib = [](int64_t bytes) { return bytes / (1024.0 * 1024.0); };
  std::printf(
      "input %s, %d ops, executor %s, %d threads, %d batch norms folded, %d sums and %d "
      "activations fused, %d blobs blocked, %d parameters packed\n",
      r.input_shape.c_str(), r.ops, FLAGS_executor.c_str(), FLAGS_threads,
      r.rewrites.folded_batch_norms, r.rewrites.fused_sums, r.rewrites.fused_activations,
      r.blocked_blobs, r.packed_parameters);
  std::printf("latency: median %.2f ms, p90 %.2f ms over %d iterations; %.1f images/s\n",
              r.median_ms, r.p90_ms, r.iterations, r.images_per_second);
  std::printf("peak RSS %.1f MiB, %.1f MiB above the %.1f MiB before loading\n", mib(r.peak_rss),
              mib(r.peak_rss - r.rss_before_load), mib(r.rss_before_load));
  std::printf("parameters %.1f MiB; arena %.2f MiB, lower bound %.2f MiB, naive %.2f MiB; "
              "scratch %.2f MiB; setup %.2f s\n",
              mib(r.param_bytes), mib(r.arena_bytes), mib(r.lower_bound_bytes),
              mib(r.naive_bytes), mib(r.scratch_bytes), r.setup_seconds);
}

}  // namespace
}  // namespace braid::bench

int main(int argc, char** argv) {
  std::vector<char*> original(argv, argv + argc + 1);  // gflags reorders argv
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  const std::vector<std::string> models = braid::ParseCommandLine(
      argc, argv, "braid_bench_inference MODEL.onnx|--model_dir DIR [--threads 2] [--json]");
  const auto bad_flags = [](const std::string& message) {
    std::fprintf(stderr, "braid_bench_inference: %s\n", message.c_str());
    return braid::kExitBadFlags;
  };
  if (models.size() != (FLAGS_model_dir.empty() ? 1u : 0u)) {
    return bad_flags("name one MODEL.onnx, or --model_dir DIR alone");
  }
  if (FLAGS_executor != "simple" && FLAGS_executor != "dag") {
    return bad_flags("--executor must be 'simple' or 'dag', got '" + FLAGS_executor + "'");
  }
  if (FLAGS_threads < 1 || FLAGS_warmup < 0 || FLAGS_min_iters < 1 || FLAGS_max_iters < 1) {
    return bad_flags("--threads, --min_iters and --max_iters must be >= 1, --warmup >= 0");
  }
  const std::string threads = std::to_string(FLAGS_threads);
  braid::ExecWithEnvironment(original.data(), {{"OMP_NUM_THREADS", threads, true},
                                               {"OPENBLAS_NUM_THREADS", threads, true},
                                               braid::kBoundedSpin});
  const std::string path = models.empty() ? "" : models[0];
  return braid::RunTool("braid_bench_inference", [&] {
    const braid::bench::InferenceResult r = braid::bench::Measure(path);
    if (FLAGS_json) {
      braid::bench::PrintJson(r);
    } else {
      braid::bench::PrintReport(r);
    }
  });
}
