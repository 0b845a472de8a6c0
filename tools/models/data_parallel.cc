#include "tools/models/data_parallel.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "planner/op_seed.h"
#include "runtime/device.h"
#include "runtime/op_schema.h"
#include "runtime/status.h"
#include "tools/models/model_builder.h"

namespace braid {
namespace {

void Prefix(google::protobuf::RepeatedPtrField<std::string>* names, const std::string& prefix) {
  for (std::string& name : *names) name = prefix + name;
}

bool RunsOnHostOnly(const OperatorDef& op) {
  const OpSchema* schema = FindSchema(op.type());
  return schema != nullptr && schema->host_only();
}

// `op` on `device` (host-only ops stay on the host) with every blob name under `prefix`.
OperatorDef ScopedOp(const OperatorDef& op, const std::string& prefix, const DeviceOption& device) {
  OperatorDef out = op;
  Prefix(out.mutable_input(), prefix);
  Prefix(out.mutable_output(), prefix);
  Prefix(out.mutable_control_input(), prefix);
  if (!RunsOnHostOnly(op)) *out.mutable_device_option() = device;
  if (!out.name().empty()) out.set_name(prefix + out.name());
  return out;
}

// The gradients the updates of `train` read, in the order the backward pass finishes them (by
// the position of each one's last writer).
std::vector<std::string> GradientsInReadyOrder(const NetDef& train) {
  std::map<std::string, int> last_writer;
  for (int i = 0; i < train.op_size(); ++i) {
    if (train.op(i).type() == "MomentumSGDUpdate") continue;  // it rewrites the gradient too
    for (const std::string& out : train.op(i).output()) last_writer[out] = i;
  }
  std::vector<std::pair<int, std::string>> ready;
  for (const OperatorDef& op : train.op()) {
    if (op.type() == "MomentumSGDUpdate") ready.push_back({last_writer[op.input(0)], op.input(0)});
  }
  std::stable_sort(ready.begin(), ready.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> gradients;
  for (auto& [position, gradient] : ready) gradients.push_back(std::move(gradient));
  return gradients;
}

bool IsUpdate(const OperatorDef& op) {
  return op.type() == "Iter" || op.type() == "LearningRate" || op.type() == "MomentumSGDUpdate";
}

// Splits each of the reader's outputs along the batch into one piece per device, where the reader
// runs (on the host; each device's copy of a piece, if any, follows in its replica).
void AddBatchSplits(const OperatorDef& reader, const TrainingNets& dp,
                    const std::vector<DeviceOption>& devices, NetDef* train) {
  for (const std::string& whole : reader.output()) {
    OperatorDef* split = train->add_op();
    split->set_type("Split");
    split->set_name("split_" + whole);
    split->add_input(whole);
    for (size_t d = 0; d < devices.size(); ++d) split->add_output(dp.OnDevice(d, whole));
    AddIntArg(split, "axis", 0);
    *split->mutable_device_option() = reader.device_option();
  }
}

NetDef ReplicateTrain(const NetDef& single, const TrainingNets& dp,
                      const std::vector<DeviceOption>& devices, const ProcessScaleOut& processes) {
  if (single.op_size() == 0 || single.op(0).output_size() == 0) {
    throw Error(Status::InvalidArgument("net '" + single.name() + "' has no reader op first"));
  }
  NetDef train = single;
  train.clear_op();
  OperatorDef reader = single.op(0);
  if (!RunsOnHostOnly(reader)) *reader.mutable_device_option() = devices[0];
  *train.add_op() = reader;
  AddBatchSplits(reader, dp, devices, &train);
  for (size_t d = 0; d < devices.size(); ++d) {
    for (int i = 1; i < single.op_size(); ++i) {
      if (!IsUpdate(single.op(i)))
        *train.add_op() = ScopedOp(single.op(i), dp.device_prefixes[d], devices[d]);
    }
  }
  std::string previous;  // the last Allreduce's first output: the next one's control input
  int64_t tag = 0;
  for (const std::string& gradient : GradientsInReadyOrder(single)) {
    OperatorDef* allreduce = train.add_op();
    allreduce->set_type("Allreduce");
    allreduce->set_name("allreduce_" + gradient);
    for (size_t d = 0; d < devices.size(); ++d) {
      allreduce->add_input(dp.OnDevice(d, gradient));
      allreduce->add_output(dp.OnDevice(d, gradient));
    }
    if (!previous.empty()) allreduce->add_control_input(previous);
    previous = allreduce->output(0);
    AddIntArg(allreduce, "average", 1);
    *allreduce->mutable_device_option() = devices[0];
    if (processes.world_size > 1) {
      allreduce->set_engine("GLOO");
      AddIntArg(allreduce, "tag", tag++);
      AddStringArg(allreduce, "algorithm", processes.algorithm);
    }
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    for (const OperatorDef& op : single.op()) {
      if (IsUpdate(op)) *train.add_op() = ScopedOp(op, dp.device_prefixes[d], devices[d]);
    }
  }
  return train;
}

NetDef ReplicateInit(const NetDef& single, const TrainingNets& dp,
                     const std::vector<DeviceOption>& devices) {
  NetDef init = single;
  init.clear_op();
  for (const OperatorDef& op : single.op()) {
    // Scoped names would change the fills' default seeds (a hash of the output name): pin them.
    OperatorDef scoped = ScopedOp(op, dp.device_prefixes[0], devices[0]);
    AddIntArg(&scoped, "seed", static_cast<int64_t>(OpSeed(op)));
    *init.add_op() = scoped;
  }
  for (size_t d = 1; d < devices.size(); ++d) {
    for (const OperatorDef& op : single.op()) {
      for (const std::string& blob : op.output()) {
        OperatorDef* copy = init.add_op();
        copy->set_type("Copy");
        copy->add_input(dp.OnDevice(0, blob));
        copy->add_output(dp.OnDevice(d, blob));
        *copy->mutable_device_option() = devices[d];
      }
    }
  }
  return init;
}

}  // namespace

std::string DeviceScope(const DeviceOption& device) {
  const Device d = DeviceFromProto(device);
  const char* scope = d.type == DeviceType::kCuda ? "gpu_" : d.type == DeviceType::kSim ? "sim_" : "cpu_";
  return scope + std::to_string(d.id) + "/";
}

TrainingNets ReplicateForDevices(const TrainingNets& single,
                                 const std::vector<DeviceOption>& devices,
                                 const ProcessScaleOut& processes) {
  if (devices.empty())
    throw Error(Status::InvalidArgument("data parallel training needs a device"));
  if (processes.world_size > 1) {
    for (const DeviceOption& device : devices) {
      if (!DeviceFromProto(device).is_host()) {
        throw Error(Status::InvalidArgument(
            "multi-process training runs on cpu devices so far, not " +
            DeviceFromProto(device).ToString()));
      }
    }
    if (processes.algorithm != "ring" && processes.algorithm != "halving_doubling") {
      throw Error(Status::InvalidArgument("all-reduce algorithm must be ring or "
                                          "halving_doubling, not '" + processes.algorithm + "'"));
    }
  }
  TrainingNets dp = single;
  dp.device_prefixes.clear();
  for (const DeviceOption& device : devices) dp.device_prefixes.push_back(DeviceScope(device));
  dp.params.init_net = ReplicateInit(single.params.init_net, dp, devices);
  dp.train = ReplicateTrain(single.train, dp, devices, processes);
  dp.test = single.test;
  dp.test.clear_op();
  for (const OperatorDef& op : single.test.op()) {
    *dp.test.add_op() = ScopedOp(op, dp.device_prefixes[0], devices[0]);
  }
  return dp;
}

}  // namespace braid
