// braid_run: runs a net and reports where the time went and what it computed.
//
//   braid_run NET [--init INIT_NET] [--executor simple|dag] [--threads N] [--iters K]
//                 [--trace FILE] [--memory-plan on|off] [--device sim:0] [--device-memory 16G]
//                 [--algo-cache PATH]
//
// Loads NET (text or binary NetDef), runs INIT_NET once in the same workspace, builds NET (with
// --executor replacing NetDef.type, --threads its "num_workers" argument and --device the
// device_option of both nets, which their ops take unless they name their own), with
// --memory-plan on plans its memory (runtime/memory_planning.h, inference mode: every recyclable
// blob becomes a view into one arena per device; the plan is verified) and prints its summary line
//
//   memory plan: naive 1.00 MiB, planned 384.00 KiB, lower bound 384.00 KiB, ...
//
// then runs NET K times, prints the per-op-type profile and, for each external output of NET, one
// checksum line:
//
//   output fc_out shape float32[8,16] sum=12.3456789 abs_sum=98.7654321 fnv=0123456789abcdef
//
// fnv is FNV-1a (64 bit) over the tensor's raw bytes, so two runs agree bit for bit exactly when
// their lines are equal (runs with --memory-plan on and off, or on cpu:0 and sim:0, compare this
// way; outputs on a device are copied to the host first). Last, "algorithm searches: N": Conv
// times its algorithms per shape (ops/nn/conv_algorithm.h), so two processes may choose
// differently; --algo-cache PATH loads the choices from PATH when it exists and saves them there,
// so runs sharing PATH choose alike (BRAID_ALGORITHM_SEARCH=rule: the fixed rule, no timing). Exit codes: 0
// success, 1 the net failed (its Status on one stderr line), 2 bad flags.
//
// NET may be an ONNX model ("model.onnx", runtime/onnx/onnx_import.h): it is imported in memory,
// its init net runs (so --init is refused), and its input is fed with uniform values in [-1, 1)
// drawn from a fixed seed (one line names the input and its shape) before NET runs as above.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <string>

#include "runtime/chrome_trace.h"
#include "runtime/memory_planning.h"
#include "runtime/net.h"
#include "runtime/onnx/onnx_import.h"
#include "runtime/op_type_profile.h"
#include "runtime/proto_io.h"
#include "runtime/status.h"
#include "runtime/workspace.h"
#include "tools/algorithm_cache.h"
#include "tools/command_line.h"
#include "tools/plan_summary.h"

DEFINE_string(init, "", "init net run once, in the same workspace, before NET");
DEFINE_string(executor, "", "executor replacing NetDef.type: simple or dag");
DEFINE_int32(threads, 0, "worker threads for the dag executor (sets the num_workers argument)");
DEFINE_int32(iters, 1, "iterations of NET to run");
DEFINE_string(trace, "", "write a Chrome-trace JSON of every op run to this file");
DEFINE_string(device, "",
              "run both nets on this device (cpu:N, or sim:N: a simulated GPU) unless their ops "
              "name another");
DEFINE_string(memory_plan, "off",
              "on: plan the net's memory (inference mode) into one arena per device before "
              "running it, and print the plan's naive/planned/lower-bound bytes");
DEFINE_string(algo_cache, "",
              "algorithm choices (runtime/algorithm_registry.h): loaded from this file at start "
              "when it exists, saved to it at exit");

namespace braid {
namespace {

struct RunOptions {
  std::string net_path;
  std::string init_path;
  std::string executor;
  int threads = 0;
  int iterations = 1;
  std::string trace_path;
  bool memory_plan = false;
  std::string device;
  std::string algo_cache;
};

[[noreturn]] void ExitBadFlags(const std::string& message) {
  std::cerr << "braid_run: " << message << "\n" << gflags::ProgramUsage() << "\n";
  std::exit(kExitBadFlags);
}

RunOptions ParseFlags(int argc, char** argv) {
  std::vector<std::string> nets = ParseCommandLine(
      argc, argv,
      "braid_run NET [--init INIT_NET] [--executor simple|dag] [--threads N] [--iters K] "
      "[--trace FILE] [--memory-plan on|off] [--device sim:0] [--device-memory 16G]\n"
      "       braid_run MODEL.onnx [same flags, no --init]");
  if (nets.size() != 1)
    ExitBadFlags("expected exactly one NET file, got " + std::to_string(nets.size()));
  if (!FLAGS_executor.empty() && FLAGS_executor != "simple" && FLAGS_executor != "dag") {
    ExitBadFlags("--executor must be 'simple' or 'dag', got '" + FLAGS_executor + "'");
  }
  if (IsOnnxPath(nets[0]) && !FLAGS_init.empty()) {
    ExitBadFlags("--init: an ONNX model carries its own weights");
  }
  if (FLAGS_threads < 0) ExitBadFlags("--threads must be >= 0");
  if (FLAGS_iters < 1) ExitBadFlags("--iters must be >= 1");
  if (FLAGS_memory_plan != "on" && FLAGS_memory_plan != "off") {
    ExitBadFlags("--memory-plan must be 'on' or 'off', got '" + FLAGS_memory_plan + "'");
  }
  if (!FLAGS_device.empty()) {
    std::vector<Device> devices;
    const Status device =
        StatusFromCall([&] { devices = ParseDeviceList(FLAGS_device, "braid_run", "--device"); });
    if (!device.ok()) {  // one line, naming the tool and the flag (and CUDA's error for cuda:N)
      std::cerr << device.message() << "\n";
      std::exit(kExitBadFlags);
    }
    if (devices.size() != 1) ExitBadFlags("--device " + FLAGS_device + ": name one device");
  }
  return {nets[0],     FLAGS_init,  FLAGS_executor,           FLAGS_threads,
          FLAGS_iters, FLAGS_trace, FLAGS_memory_plan == "on", FLAGS_device,
          FLAGS_algo_cache};
}

void ThrowIfError(const Status& status) {
  if (!status.ok()) throw Error(status);
}

void SetNetArgument(const std::string& name, int64_t value, NetDef* def) {
  for (Argument& arg : *def->mutable_arg()) {
    if (arg.name() == name) {
      arg.Clear();
      arg.set_name(name);
      arg.set_i(value);
      return;
    }
  }
  Argument* arg = def->add_arg();
  arg->set_name(name);
  arg->set_i(value);
}

// The net at `path`, on options.device when given.
NetDef LoadNet(const std::string& path, const RunOptions& options) {
  NetDef def = LoadNetDef(path);
  if (!options.device.empty()) *def.mutable_device_option() = DeviceToProto(ParseDevice(options.device));
  return def;
}

// The imported ONNX model's predict net, after its init net ran in `ws` and its input was fed.
NetDef ImportOnnxIntoWorkspace(const RunOptions& options, Workspace* ws) {
  ImportedModel model;
  ThrowIfError(ImportOnnxFile(options.net_path, {}, &model));
  if (!options.device.empty()) {
    *model.init_net.mutable_device_option() = DeviceToProto(ParseDevice(options.device));
    *model.predict_net.mutable_device_option() = model.init_net.device_option();
  }
  ThrowIfError(ws->RunNetOnce(model.init_net));
  Tensor host;
  host.Resize(DType::kFloat32, model.input_shape);
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (int64_t i = 0; i < host.numel(); ++i) host.mutable_data<float>()[i] = uniform(rng);
  Tensor* input = ws->CreateBlob(model.input_name);
  if (!options.device.empty()) *input = Tensor(ParseDevice(options.device));
  input->CopyFrom(host);
  std::cout << "onnx input " << model.input_name << " shape " << host.ShapeString()
            << ": uniform [-1, 1), seed 0\n";
  return model.predict_net;
}

NetDef LoadMainNet(const RunOptions& options, Workspace* ws) {
  NetDef def = IsOnnxPath(options.net_path) ? ImportOnnxIntoWorkspace(options, ws)
                                            : LoadNet(options.net_path, options);
  if (!options.executor.empty()) def.set_type(options.executor);
  if (options.threads > 0) SetNetArgument("num_workers", options.threads, &def);
  if (def.name().empty()) def.set_name("main");
  return def;
}

template <typename T>
void SumValues(const Tensor& tensor, double* sum, double* abs_sum) {
  const T* data = tensor.data<T>();
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    const double value = static_cast<double>(data[i]);
    *sum += value;
    *abs_sum += std::fabs(value);
  }
}

// The sum and the sum of absolute values of every element, added in index order as doubles.
void SumElements(const Tensor& tensor, double* sum, double* abs_sum) {
  switch (tensor.dtype()) {
    case DType::kFloat32:
      SumValues<float>(tensor, sum, abs_sum);
      break;
    case DType::kFloat64:
      SumValues<double>(tensor, sum, abs_sum);
      break;
    case DType::kInt32:
      SumValues<int32_t>(tensor, sum, abs_sum);
      break;
    case DType::kInt64:
      SumValues<int64_t>(tensor, sum, abs_sum);
      break;
    case DType::kUInt8:
      SumValues<uint8_t>(tensor, sum, abs_sum);
      break;
    case DType::kBool:
      SumValues<bool>(tensor, sum, abs_sum);
      break;
  }
}

uint64_t Fnv1a64(const void* data, size_t bytes) {
  uint64_t hash = 14695981039346656037ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

// "output NAME shape float32[2,3] sum=.. abs_sum=.. fnv=..", or throws naming the blob.
std::string ChecksumLine(const NetDef& def, const std::string& name, const Tensor* on_device) {
  if (on_device == nullptr || (on_device->numel() > 0 && !on_device->has_storage())) {
    throw Error(Status::NotFound("net '" + def.name() + "': external output '" + name +
                                 "' was never written"));
  }
  Tensor host;  // a copy of an output that lives on a device
  if (!on_device->device().is_host()) host.CopyFrom(*on_device);
  const Tensor* tensor = on_device->device().is_host() ? on_device : &host;
  double sum = 0, abs_sum = 0;
  SumElements(*tensor, &sum, &abs_sum);
  const uint64_t fnv =
      tensor->numel() > 0 ? Fnv1a64(tensor->raw_data(), tensor->nbytes()) : Fnv1a64(nullptr, 0);
  char numbers[128];
  std::snprintf(numbers, sizeof(numbers), "sum=%.9g abs_sum=%.9g fnv=%016" PRIx64, sum, abs_sum,
                fnv);
  return "output " + name + " shape " + tensor->ShapeString() + " " + numbers;
}

void PrintChecksums(const NetDef& def, const Workspace& ws) {
  if (def.external_output_size() == 0) {
    std::cout << "net '" << def.name() << "' lists no external_output: nothing to checksum\n";
  }
  for (const std::string& name : def.external_output()) {
    std::cout << ChecksumLine(def, name, ws.GetBlob(name)) << "\n";
  }
}

void RunAndReport(const RunOptions& options) {
  AlgorithmCache algorithms(options.algo_cache);
  OpTypeProfile profile;  // observers outlive the workspace, which owns the net they watch
  ChromeTraceWriter trace;
  Workspace ws;
  if (!options.init_path.empty()) ThrowIfError(ws.RunNetOnce(LoadNet(options.init_path, options)));
  Net* net = ws.CreateNet(LoadMainNet(options, &ws));
  std::unique_ptr<NetMemory> memory;  // keeps the arenas for the net's runs
  if (options.memory_plan) {
    MemoryPlanOptions planning;
    planning.verify = true;  // a wrong plan fails here, naming the blobs, not as a checksum
    memory = PlanNetMemory(*net, &ws, planning);
    std::cout << PlanSummaryLine(memory->plan()) << "\n";
  }
  net->AddObserver(&profile);
  if (!options.trace_path.empty()) net->AddObserver(&trace);

  const int64_t start_ns = NowNanos();
  for (int i = 0; i < options.iterations; ++i) ThrowIfError(net->Run());
  const double wall_ms = (NowNanos() - start_ns) / 1e6;

  const NetDef& def = net->def();
  const std::string executor = def.type().empty() ? "simple" : def.type();
  std::printf(
      "net '%s': %d ops, executor %s, %d workers, %d iterations, %.3f ms wall (%.3f ms each)\n",
      def.name().c_str(), net->num_ops(), executor.c_str(), executor == "dag" ? NumWorkers(def) : 1,
      options.iterations, wall_ms, wall_ms / options.iterations);
  std::cout << profile.Table();
  if (!options.trace_path.empty()) {
    trace.WriteFile(options.trace_path);
    std::cout << "trace written to " << options.trace_path << "\n";
  }
  PrintChecksums(def, ws);
  algorithms.Save();
  std::cout << algorithms.SummaryLine() << "\n";
}

}  // namespace
}  // namespace braid

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  const braid::RunOptions options = braid::ParseFlags(argc, argv);
  return braid::RunTool("braid_run", [&] { braid::RunAndReport(options); });
}
