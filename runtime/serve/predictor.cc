#include "braid/predictor.h"

#include <glog/logging.h>

#include <algorithm>
#include <set>
#include <utility>

#include "runtime/core/argument.h"
#include "runtime/core/device_context.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/init_net.h"
#include "runtime/exec/net.h"
#include "runtime/exec/net_args.h"
#include "runtime/io/model_folder.h"
#include "runtime/io/onnx/onnx_import.h"
#include "runtime/models/optimize_inference.h"
#include "runtime/models/pack_parameters.h"
#include "runtime/serve/context_pool.h"
#include "runtime/serve/predictor_context.h"
#include "runtime/serve/tensor_views.h"

namespace braid {
namespace {

// "'a', 'b'".
std::string QuotedList(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
  return list;
}

}  // namespace

struct Predictor::State {
  PredictorOptions options;
  Workspace parameters;  // written by the init net only, then read by every context
  PredictorSpec spec;
  std::map<std::string, DType> input_dtypes;  // known ones (value_info.json)
  int64_t parameter_bytes = 0;

  // The request contexts and the requests waiting for one. Declared last: destroyed first, it
  // finishes the asynchronous requests (which read the members above) before they go.
  std::unique_ptr<ContextPool> pool;

  std::string label() const { return "predictor '" + spec.predict_net.name() + "'"; }
  // Throws InvalidArgument for a missing, unknown or invalid input.
  void CheckInputs(const std::map<std::string, InputView>& inputs) const;
  // Throws InvalidArgument for a name that is not an output or a device braid cannot use.
  void CheckOutputs(const std::map<std::string, OutputView>& outputs) const;
};

void Predictor::State::CheckInputs(const std::map<std::string, InputView>& inputs) const {
  const auto refuse = [&](const std::string& what) {
    throw Error(Status::InvalidArgument(label() + ": " + what));
  };
  for (const std::string& name : spec.input_names) {
    auto it = inputs.find(name);
    if (it == inputs.end()) refuse("input '" + name + "' is missing");
    const InputView& view = it->second;
    const Status valid = StatusFromCall([&] { ViewOf(view, "input '" + name + "'"); });
    if (!valid.ok()) refuse(valid.message());
    auto expected = input_dtypes.find(name);
    if (expected != input_dtypes.end() && expected->second != view.dtype) {
      refuse("input '" + name + "' is " + DTypeName(view.dtype) + ", the model takes " +
             DTypeName(expected->second));
    }
  }
  for (const auto& [name, view] : inputs) {
    if (std::find(spec.input_names.begin(), spec.input_names.end(), name) ==
        spec.input_names.end()) {
      refuse("'" + name +
             "' is not an input of the model (its inputs: " + QuotedList(spec.input_names) + ")");
    }
  }
}

void Predictor::State::CheckOutputs(const std::map<std::string, OutputView>& outputs) const {
  for (const auto& output : outputs) {  // no structured binding: the lambda below reads the view
    const std::string& name = output.first;
    const OutputView& view = output.second;
    if (std::find(spec.output_names.begin(), spec.output_names.end(), name) ==
        spec.output_names.end()) {
      throw Error(Status::InvalidArgument(
          label() + ": '" + name +
          "' is not an output of the model (its outputs: " + QuotedList(spec.output_names) + ")"));
    }
    const Status valid = StatusFromCall(
        [&] { ViewDevice(view.device, view.data, nullptr, "output '" + name + "'"); });
    if (!valid.ok()) throw Error(Status::InvalidArgument(label() + ": " + valid.message()));
  }
}

namespace {

// Sets `def`'s device (unless it names one), executor and intra-op threads.
void SetDeviceAndExecutor(const PredictorOptions& options, NetDef* def) {
  if (!def->has_device_option())
    *def->mutable_device_option() = DeviceToProto(ParseDevice(options.device));
  def->set_type(options.workers_per_run > 1 ? "dag" : "simple");
  SetNetIntArg(def, kNumWorkersArg, options.workers_per_run);
  if (options.intra_op_threads > 0) SetNetIntArg(def, kIntraOpThreadsArg, options.intra_op_threads);
}

// The predict net's inputs (external inputs the init net did not write), in its order, and the
// checks that let contexts share the parameters: no op writes one.
void DescribeNet(const Workspace& parameters, PredictorSpec* spec) {
  const NetDef& net = spec->predict_net;
  const std::string label = "predictor '" + net.name() + "'";
  if (spec->input_names.empty()) {
    for (const std::string& name : ExternalInputsNeedingData(net)) {
      if (!parameters.HasBlob(name)) spec->input_names.push_back(name);
    }
  }
  for (int i = 0; i < net.op_size(); ++i) {
    const OperatorDef& op = net.op(i);
    for (const std::string& out : op.output()) {
      if (parameters.HasBlob(out)) {
        throw Error(
            Status::InvalidArgument(label + ": op " + std::to_string(i) + " (" + op.type() + " '" +
                                    op.name() + "') writes '" + out +
                                    "', a blob of the init net; concurrent runs share the init "
                                    "net's blobs, so the predict net may only read them"));
      }
      if (std::find(spec->input_names.begin(), spec->input_names.end(), out) !=
          spec->input_names.end()) {
        spec->inputs_the_net_writes.insert(out);
      }
    }
  }
  spec->output_names.assign(net.external_output().begin(), net.external_output().end());
  if (spec->output_names.empty()) {
    throw Error(Status::InvalidArgument(label + ": the predict net lists no external_output"));
  }
}

}  // namespace

Predictor::Predictor(std::unique_ptr<State> state) : state_(std::move(state)) {}
Predictor::~Predictor() = default;

Status Predictor::FromNetDefs(const NetDef& init_net, const NetDef& predict_net,
                              const PredictorOptions& options,
                              std::unique_ptr<Predictor>* predictor) {
  ModelFolder model;
  model.init_net = init_net;
  model.predict_net = predict_net;
  return FromModel(std::move(model), /*dtypes_known=*/false, options, predictor);
}

Status Predictor::FromModelFolder(const std::string& dir, const PredictorOptions& options,
                                  std::unique_ptr<Predictor>* predictor) {
  ModelFolder model;
  Status status = LoadModelFolder(dir, &model);
  if (!status.ok()) return status;
  return FromModel(std::move(model), /*dtypes_known=*/true, options, predictor);
}

Status Predictor::FromOnnxFile(const std::string& path, const PredictorOptions& options,
                               std::unique_ptr<Predictor>* predictor) {
  ModelFolder model;
  Status status = ImportOnnxFile(path, {}, &model);
  if (!status.ok()) return status;
  return FromModel(std::move(model), /*dtypes_known=*/true, options, predictor);
}

Status Predictor::FromModel(ModelFolder model, bool dtypes_known, const PredictorOptions& options,
                            std::unique_ptr<Predictor>* predictor) {
  return StatusFromCall([&] {
    if (options.max_concurrent_runs < 1 || options.workers_per_run < 1 ||
        options.workers_per_run > kMaxNetThreads) {
      throw Error(Status::InvalidArgument(
          "predictor: max_concurrent_runs must be >= 1 and workers_per_run 1 to " +
          std::to_string(kMaxNetThreads) + ", got " + std::to_string(options.max_concurrent_runs) +
          " and " + std::to_string(options.workers_per_run)));
    }
    if (options.max_input_shapes < 2) {
      throw Error(Status::InvalidArgument(
          "predictor: max_input_shapes must be >= 2 (a context keeps its first), got " +
          std::to_string(options.max_input_shapes)));
    }
    if (options.intra_op_threads < 0 || options.intra_op_threads > kMaxNetThreads) {
      throw Error(Status::InvalidArgument(
          "predictor: intra_op_threads must be 0 (the process's) to " +
          std::to_string(kMaxNetThreads) + ", got " + std::to_string(options.intra_op_threads)));
    }
    auto state = std::make_unique<State>();
    state->options = options;
    state->spec.device = ParseDevice(options.device);
    GetDeviceContext(state->spec.device);  // refuses a device braid cannot use
    state->spec.plan_memory = options.plan_memory;
    state->spec.max_input_shapes = options.max_input_shapes;
    SetDeviceAndExecutor(options, &model.init_net);
    model.init_net.set_type("simple");
    Status ran = RunInitNet(std::move(model.init_net), &state->parameters);  // weights held once
    if (!ran.ok()) throw Error(ran);
    state->spec.predict_net = std::move(model.predict_net);
    if (state->spec.predict_net.name().empty()) state->spec.predict_net.set_name("predict");
    SetDeviceAndExecutor(options, &state->spec.predict_net);
    for (const ValueInfo& input : model.inputs) {
      state->spec.input_names.push_back(input.name);
      if (dtypes_known) state->input_dtypes[input.name] = input.dtype;
    }
    DescribeNet(state->parameters, &state->spec);
    const std::vector<std::string> parameter_names = state->parameters.LocalBlobNames();
    if (options.optimize_graph) {
      OptimizeInferenceNet(&state->spec.predict_net,
                           {parameter_names.begin(), parameter_names.end()}, &state->parameters);
    }
    PackParameters(state->spec.predict_net, {parameter_names.begin(), parameter_names.end()},
                   &state->parameters);  // no one else reads them
    for (const std::string& name : parameter_names) {
      state->parameter_bytes += state->parameters.GetBlob(name)->nbytes();
    }
    state->pool = std::make_unique<ContextPool>(&state->parameters, &state->spec,
                                                options.max_concurrent_runs, state->label());
    predictor->reset(new Predictor(std::move(state)));
  });
}

Status Predictor::Run(const std::map<std::string, InputView>& inputs,
                      std::map<std::string, OutputTensor>* outputs,
                      const RunOptions& options) const {
  return StatusFromCall([&] {
    state_->CheckInputs(inputs);
    state_->pool->Run(inputs, MarkWriters(inputs, state_->label()),
                      RunStop{options.deadline, options.stop},
                      [outputs](const OutputValues& values) {
                        for (const auto& [name, value] : values) CopyOut(*value, &(*outputs)[name]);
                      });
    const std::vector<std::string>& ours = state_->spec.output_names;
    for (auto it = outputs->begin(); it != outputs->end();) {  // only this model's outputs
      it = std::find(ours.begin(), ours.end(), it->first) != ours.end() ? std::next(it)
                                                                        : outputs->erase(it);
    }
  });
}

Status Predictor::Run(const std::map<std::string, InputView>& inputs,
                      std::map<std::string, OutputView>* outputs, const RunOptions& options) const {
  return StatusFromCall([&] {
    state_->CheckOutputs(*outputs);
    state_->CheckInputs(inputs);
    state_->pool->Run(
        inputs, MarkWriters(inputs, state_->label()), RunStop{options.deadline, options.stop},
        [&](const OutputValues& values) {
          for (auto& [name, view] : *outputs) view.shape = values.at(name)->shape();
          for (auto& [name, view] : *outputs) {  // every one fits before any is written
            CheckFits(*values.at(name), &view, state_->label() + ": output '" + name + "'");
          }
          for (auto& [name, view] : *outputs) CopyOut(*values.at(name), view);
        });
  });
}

Status Predictor::Run(const std::vector<InputView>& inputs, std::vector<OutputTensor>* outputs,
                      const RunOptions& options) const {
  const std::vector<std::string>& in = state_->spec.input_names;
  const std::vector<std::string>& out = state_->spec.output_names;
  if (inputs.size() != in.size()) {
    return Status::InvalidArgument(state_->label() + ": " + std::to_string(inputs.size()) +
                                   " inputs given by position, the model takes " +
                                   std::to_string(in.size()) + " (" + QuotedList(in) + ")");
  }
  std::map<std::string, InputView> by_name;
  for (size_t i = 0; i < in.size(); ++i) by_name.emplace(in[i], inputs[i]);
  // The caller's outputs lend their buffers to the named run, and take them back filled.
  outputs->resize(out.size());
  std::map<std::string, OutputTensor> named;
  for (size_t i = 0; i < out.size(); ++i) named[out[i]] = std::move((*outputs)[i]);
  const Status status = Run(by_name, &named, options);
  for (size_t i = 0; i < out.size(); ++i) (*outputs)[i] = std::move(named[out[i]]);
  return status;
}

std::future<RunResult> Predictor::RunAsync(std::map<std::string, InputView> inputs,
                                           const RunOptions& options) const {
  std::future<RunResult> result;
  const Status queued = StatusFromCall([&] {
    state_->CheckInputs(inputs);
    StreamMarks writers = MarkWriters(inputs, state_->label());
    result = state_->pool->RunAsync(std::move(inputs), std::move(writers),
                                    RunStop{options.deadline, options.stop});
  });
  if (queued.ok()) return result;
  std::promise<RunResult> refused;
  refused.set_value(RunResult{queued, {}});
  return refused.get_future();
}

const std::vector<std::string>& Predictor::input_names() const { return state_->spec.input_names; }
const std::vector<std::string>& Predictor::output_names() const {
  return state_->spec.output_names;
}

PredictorMemory Predictor::memory() const {
  PredictorMemory memory;
  memory.parameter_bytes = state_->parameter_bytes;
  state_->pool->AddMemory(&memory);
  return memory;
}

}  // namespace braid
