// braid_run: runs a net and reports where the time went and what it computed.
//
//   braid_run NET [--init INIT_NET] [--input NAME=FILE.npy]... [--executor simple|dag] [--threads N]
//                 [--iters K] [--trace FILE] [--memory-plan on|off] [--device sim:0]
//                 [--device-memory 16G] [--algo-cache PATH] [--save-outputs DIR] [--strict-args]
//   braid_run --model-dir DIR [--input NAME=FILE.npy|random]... [same flags, no --init]
//   braid_run MODEL.onnx [--input NAME=FILE.npy|random] [same flags, no --init]
//
// Loads NET (text or binary NetDef), runs INIT_NET once in the same workspace, feeds each --input's
// .npy file (runtime/io/npy_file.h) to its blob, builds NET (with --executor replacing NetDef.type,
// --threads its "num_workers" argument and --device the device_option of both nets, which their
// ops take unless they name their own; --strict-args sets both nets' strict_args argument, so an
// op argument the op does not take is an error rather than a warning), with --memory-plan on
// plans its memory (runtime/exec/memory_planning.h, inference mode: every recyclable blob becomes a
// view into one arena per device; the plan is verified) and prints its summary line
//
//   memory plan: naive 1.00 MiB, planned 384.00 KiB, lower bound 384.00 KiB, ...
//
// then runs NET K times, prints the per-op-type profile and, for each external output of NET, one
// checksum line (tools/output_report.h), followed for an image classifier's output ([N, C] with
// C >= 5) by its top-5 classes per image:
//
//   output prob shape float32[1,1000] sum=1 abs_sum=1 fnv=0123456789abcdef
//   top-5 prob image 0: 281 (0.4123), 285 (0.2011), 282 (0.0912), 287 (0.0301), 356 (0.0122)
//
// fnv is FNV-1a (64 bit) over the tensor's raw bytes, so two runs agree bit for bit exactly when
// their lines are equal (runs with --memory-plan on and off, or on cpu:0 and sim:0, compare this
// way; outputs on a device are copied to the host first). --save-outputs DIR writes every external
// output to DIR/NAME.npy (the name sanitised). Last, "algorithm searches: N": Conv times its
// algorithms per shape (ops/nn/conv_algorithm.h), so two processes may choose differently;
// --algo-cache PATH loads the choices from PATH when it exists and saves them there, so runs
// sharing PATH choose alike (BRAID_ALGORITHM_SEARCH=rule: the fixed rule, no timing). Exit codes:
// 0 success, 1 the net failed (its Status on one stderr line), 2 bad flags.
//
// A model runs the same way: a folder in the layout of Caffe2's model zoo (--model-dir,
// runtime/io/model_folder.h) or an ONNX model ("model.onnx", runtime/io/onnx/onnx_import.h,
// imported in memory). Its init net runs (so --init is refused), its inputs are fed and its predict
// net runs as NET above. Each input is the .npy file an --input names it with (an ONNX model is
// imported for the file's shape), or with --input NAME=random or no --input naming it, uniform
// values in [-1, 1) from a fixed seed in the shape value_info.json (or the ONNX model) gives; one
// line per input names it, its shape and source:
//
//   input data shape float32[1,3,224,224]: uniform [-1, 1), seed 0
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "braid/status.h"
#include "runtime/core/argument.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/chrome_trace.h"
#include "runtime/exec/init_net.h"
#include "runtime/exec/memory_planning.h"
#include "runtime/exec/net.h"
#include "runtime/exec/net_args.h"
#include "runtime/exec/op_type_profile.h"
#include "runtime/io/model_folder.h"
#include "runtime/io/npy_file.h"
#include "runtime/io/onnx/onnx_import.h"
#include "runtime/io/proto_io.h"
#include "tools/algorithm_cache.h"
#include "tools/command_line.h"
#include "tools/model_input.h"
#include "tools/output_report.h"
#include "tools/plan_summary.h"
#include "tools/repeated_flag.h"

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
DEFINE_string(model_dir, "",
              "a model folder in the layout of Caffe2's model zoo (init_net.pb, predict_net.pb, "
              "value_info.json) to run instead of NET");
DEFINE_string(input, "",
              "NAME=FILE.npy: feed the .npy file to blob NAME; NAME=random (models only): uniform "
              "[-1, 1) values from seed 0 in the model's input shape (the default for models); "
              "repeat for several inputs");
DEFINE_string(save_outputs, "", "write every external output of NET to DIR/NAME.npy");
DEFINE_bool(strict_args, false,
            "refuse an op argument the op does not take (sets the nets' strict_args argument; "
            "without it such arguments are ignored with a warning, as Caffe2 ignores them)");
DEFINE_string(algo_cache, "",
              "algorithm choices (runtime/device/algorithm_registry.h): loaded from this file at start "
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
  std::string model_dir;
  std::vector<ModelInput> inputs;
  std::string save_outputs;
  bool strict_args = false;

  bool is_model() const { return !model_dir.empty() || IsOnnxPath(net_path); }
};

[[noreturn]] void ExitBadFlags(const std::string& message) {
  std::cerr << "braid_run: " << message << "\n" << gflags::ProgramUsage() << "\n";
  std::exit(kExitBadFlags);
}

// Checks the flags that say what runs: NET, --model-dir, --init and the --input values.
void ParseWhatRuns(const std::vector<std::string>& nets, const std::vector<std::string>& inputs,
                   RunOptions* options) {
  if (!FLAGS_model_dir.empty()) {
    if (!nets.empty()) ExitBadFlags("--model-dir takes no NET file, got '" + nets[0] + "'");
    options->model_dir = FLAGS_model_dir;
  } else if (nets.size() != 1) {
    ExitBadFlags("expected exactly one NET file (or --model-dir DIR), got " +
                 std::to_string(nets.size()));
  } else {
    options->net_path = nets[0];
  }
  options->init_path = FLAGS_init;
  if (options->is_model() && !FLAGS_init.empty()) {
    ExitBadFlags("--init: a model carries its own init net");
  }
  for (const std::string& text : inputs) {
    std::string error;
    const ModelInput input = ParseModelInput(text, &error);
    if (!error.empty()) ExitBadFlags("--input " + error);
    if (input.is_random() && !options->is_model()) {
      ExitBadFlags("--input " + text +
                   ": random values need the input's shape, which only a model (--model-dir or "
                   "MODEL.onnx) gives; feed NET a .npy file");
    }
    for (const ModelInput& earlier : options->inputs) {
      if (earlier.name == input.name) ExitBadFlags("--input " + input.name + " is given twice");
    }
    options->inputs.push_back(input);
  }
}

RunOptions ParseFlags(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc), inputs;
  std::string error;
  if (!TakeRepeatedFlag("input", &args, &inputs, &error)) ExitBadFlags(error);
  std::vector<char*> rest;
  for (std::string& arg : args) rest.push_back(arg.data());
  std::vector<std::string> nets = ParseCommandLine(
      static_cast<int>(rest.size()), rest.data(),
      "braid_run NET [--init INIT_NET] [--input NAME=FILE.npy] [--executor simple|dag] "
      "[--threads N] [--iters K] [--trace FILE] [--memory-plan on|off] [--device sim:0] "
      "[--device-memory 16G] [--save-outputs DIR] [--strict-args]\n"
      "       braid_run --model-dir DIR [--input NAME=FILE.npy|random] [same flags, no --init]\n"
      "       braid_run MODEL.onnx [--input NAME=FILE.npy|random] [same flags, no --init]");
  RunOptions options;
  ParseWhatRuns(nets, inputs, &options);
  if (!FLAGS_executor.empty() && FLAGS_executor != "simple" && FLAGS_executor != "dag") {
    ExitBadFlags("--executor must be 'simple' or 'dag', got '" + FLAGS_executor + "'");
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
  options.executor = FLAGS_executor;
  options.threads = FLAGS_threads;
  options.iterations = FLAGS_iters;
  options.trace_path = FLAGS_trace;
  options.memory_plan = FLAGS_memory_plan == "on";
  options.device = FLAGS_device;
  options.algo_cache = FLAGS_algo_cache;
  options.strict_args = FLAGS_strict_args;
  options.save_outputs = FLAGS_save_outputs;
  return options;
}

void ThrowIfError(const Status& status) {
  if (!status.ok()) throw Error(status);
}

// The net at `path`, on options.device when given.
NetDef LoadNet(const std::string& path, const RunOptions& options) {
  NetDef def = LoadNetDef(path);
  if (!options.device.empty()) *def.mutable_device_option() = DeviceToProto(ParseDevice(options.device));
  if (options.strict_args) SetNetIntArg(&def, kStrictArgsArg, 1);
  return def;
}

// Copies `host` into blob `name` of `ws`, on options.device when given.
void FeedBlob(const std::string& name, const Tensor& host, const RunOptions& options,
              Workspace* ws) {
  Tensor* blob = ws->CreateBlob(name);
  if (!options.device.empty()) *blob = Tensor(ParseDevice(options.device));
  blob->CopyFrom(host);
}

// The --input that names `name`, or random values when none does.
ModelInput GivenInput(const RunOptions& options, const std::string& name) {
  for (const ModelInput& input : options.inputs) {
    if (input.name == name) return input;
  }
  return ModelInput{name, ""};
}

// The model --model-dir or MODEL.onnx names (an ONNX model imported for the shape of the .npy file
// its input is given by). Every --input must name one of its inputs.
ModelFolder LoadModel(const RunOptions& options) {
  ModelFolder model;
  if (!options.model_dir.empty()) {
    ThrowIfError(LoadModelFolder(options.model_dir, &model));
  } else {
    OnnxImportOptions import;
    if (options.inputs.size() == 1 && !options.inputs[0].is_random()) {
      import.input_shape = MakeInputTensor(options.inputs[0], DType::kFloat32, {}).shape();
    }
    ThrowIfError(ImportOnnxFile(options.net_path, import, &model));
  }
  for (const ModelInput& given : options.inputs) {
    if (model.FindInput(given.name) != nullptr) continue;
    std::string names;
    for (const ValueInfo& input : model.inputs) names += (names.empty() ? "'" : ", '") + input.name + "'";
    throw Error(Status::InvalidArgument("braid_run: --input " + given.name +
                                        ": the model's inputs are " + names));
  }
  return model;
}

// Feeds `input` from `host` and prints where its values came from.
void FeedInput(const ModelInput& input, const Tensor& host, const RunOptions& options,
               Workspace* ws) {
  FeedBlob(input.name, host, options, ws);
  std::cout << "input " << input.name << " shape " << host.ShapeString() << ": "
            << InputSourceText(input) << "\n";
}

// The model's predict net, after its init net ran in `ws` and its inputs were fed.
NetDef LoadModelIntoWorkspace(const RunOptions& options, Workspace* ws) {
  ModelFolder model = LoadModel(options);
  if (!options.device.empty()) {
    *model.init_net.mutable_device_option() = DeviceToProto(ParseDevice(options.device));
    *model.predict_net.mutable_device_option() = model.init_net.device_option();
  }
  if (options.strict_args) {
    SetNetIntArg(&model.init_net, kStrictArgsArg, 1);
    SetNetIntArg(&model.predict_net, kStrictArgsArg, 1);
  }
  ThrowIfError(RunInitNet(std::move(model.init_net), ws));
  for (const ValueInfo& info : model.inputs) {
    const ModelInput input = GivenInput(options, info.name);
    FeedInput(input, MakeInputTensor(input, info.dtype, info.shape), options, ws);
  }
  return model.predict_net;
}

// NET, after INIT_NET ran in `ws` and the --input files were fed.
NetDef LoadNetIntoWorkspace(const RunOptions& options, Workspace* ws) {
  if (!options.init_path.empty()) ThrowIfError(ws->RunNetOnce(LoadNet(options.init_path, options)));
  for (const ModelInput& input : options.inputs) {
    Tensor host;
    ThrowIfError(ReadNpyFile(input.npy_path, &host));
    FeedInput(input, host, options, ws);
  }
  return LoadNet(options.net_path, options);
}

NetDef LoadMainNet(const RunOptions& options, Workspace* ws) {
  NetDef def =
      options.is_model() ? LoadModelIntoWorkspace(options, ws) : LoadNetIntoWorkspace(options, ws);
  if (!options.executor.empty()) def.set_type(options.executor);
  if (options.threads > 0) SetNetIntArg(&def, kNumWorkersArg, options.threads);
  if (def.name().empty()) def.set_name("main");
  return def;
}

// The external output `name` of `def` copied to the host (or itself when it lives there).
const Tensor& HostOutput(const NetDef& def, const std::string& name, const Workspace& ws,
                         Tensor* copy) {
  const Tensor* on_device = ws.GetBlob(name);
  if (on_device == nullptr || (on_device->numel() > 0 && !on_device->has_storage())) {
    throw Error(Status::NotFound("net '" + def.name() + "': external output '" + name +
                                 "' was never written"));
  }
  if (on_device->device().is_host()) return *on_device;
  copy->CopyFrom(*on_device);
  return *copy;
}

// Checksum lines, top-5 classes and, with --save-outputs, the .npy files of NET's outputs.
void ReportOutputs(const NetDef& def, const Workspace& ws, const std::string& save_dir) {
  if (def.external_output_size() == 0) {
    std::cout << "net '" << def.name() << "' lists no external_output: nothing to checksum\n";
  }
  std::map<std::string, std::string> saved;  // file name -> blob, to refuse two blobs in one file
  if (!save_dir.empty()) std::filesystem::create_directories(save_dir);
  for (const std::string& name : def.external_output()) {
    Tensor copy;
    const Tensor& host = HostOutput(def, name, ws, &copy);
    std::cout << ChecksumLine(name, host) << "\n" << TopClassesLines(name, host);
    if (save_dir.empty()) continue;
    const std::string file = OutputFileName(name);
    if (saved.count(file)) {
      throw Error(Status::InvalidArgument("--save-outputs: outputs '" + saved[file] + "' and '" +
                                          name + "' would both be saved as " + file));
    }
    saved[file] = name;
    ThrowIfError(WriteNpyFile(save_dir + "/" + file, host));
    std::cout << "saved " << name << " to " << save_dir << "/" << file << "\n";
  }
}

void RunAndReport(const RunOptions& options) {
  AlgorithmCache algorithms(options.algo_cache);
  OpTypeProfile profile;  // observers outlive the workspace, which owns the net they watch
  ChromeTraceWriter trace;
  Workspace ws;
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
  ReportOutputs(def, ws, options.save_outputs);
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
