#include "runtime/models/data_parallel.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "braid/status.h"
#include "planner/op_seed.h"
#include "runtime/core/device.h"
#include "runtime/core/op_schema.h"
#include "runtime/models/model_builder.h"

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

struct Gradient {
  std::string name;
  int64_t numel = 0;  // 0 when its parameter's shape is unknown
};

// The gradients the updates of `train` read, in the order the backward pass finishes them (by
// the position of each one's last writer), with the sizes of their parameters in `params`.
std::vector<Gradient> GradientsInReadyOrder(const NetDef& train, const ModelParams& params) {
  std::map<std::string, int> last_writer;
  for (int i = 0; i < train.op_size(); ++i) {
    if (UpdateInputsOf(train.op(i)) != nullptr) continue;  // MomentumSGDUpdate rewrites it too
    for (const std::string& out : train.op(i).output()) last_writer[out] = i;
  }
  std::vector<std::pair<int, Gradient>> ready;
  for (const OperatorDef& op : train.op()) {
    const UpdateInputs* update = UpdateInputsOf(op);
    if (update == nullptr) continue;
    const std::string& grad = op.input(update->grad);
    const ParamInfo* param = params.Find(op.input(update->param));
    ready.push_back({last_writer[grad], {grad, param ? param->numel() : 0}});
  }
  std::stable_sort(ready.begin(), ready.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Gradient> gradients;
  for (auto& [position, gradient] : ready) gradients.push_back(std::move(gradient));
  return gradients;
}

// Consecutive gradients, each bucket at most `bytes` (a larger gradient is a bucket alone).
std::vector<std::vector<std::string>> Buckets(const std::vector<Gradient>& gradients,
                                              int64_t bytes) {
  std::vector<std::vector<std::string>> buckets;
  int64_t filled = 0;
  for (const Gradient& g : gradients) {
    const int64_t size = g.numel * static_cast<int64_t>(sizeof(float));
    if (buckets.empty() || filled + size > bytes) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(g.name);
    filled += size;
  }
  return buckets;
}

bool IsUpdate(const OperatorDef& op) {
  return op.type() == "Iter" || op.type() == "LearningRate" || UpdateInputsOf(op) != nullptr;
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

bool AllOnHost(const std::vector<DeviceOption>& devices) {
  return std::all_of(devices.begin(), devices.end(),
                     [](const DeviceOption& d) { return DeviceFromProto(d).is_host(); });
}

// One Allreduce per gradient over the devices (averaging), chained in ready order.
void AddDeviceAllreduces(const std::vector<Gradient>& gradients, const TrainingNets& dp,
                         const std::vector<DeviceOption>& devices, NetDef* train) {
  if (devices.size() == 1) return;
  std::string previous;  // the last Allreduce's first output: the next one's control input
  for (const Gradient& gradient : gradients) {
    OperatorDef* allreduce = train->add_op();
    allreduce->set_type("Allreduce");
    allreduce->set_name("allreduce_" + gradient.name);
    for (size_t d = 0; d < devices.size(); ++d) {
      allreduce->add_input(dp.OnDevice(d, gradient.name));
      allreduce->add_output(dp.OnDevice(d, gradient.name));
    }
    if (!previous.empty()) allreduce->add_control_input(previous);
    previous = allreduce->output(0);
    AddIntArg(allreduce, "average", 1);
    *allreduce->mutable_device_option() = devices[0];
  }
}

// One ProcessAllreduce per bucket, chained in ready order, tagged by its place in that order, each
// rank of weight 1 (every rank reads the same number of examples, however many devices it splits
// them over: the mean of the ranks' means is the mean over the global batch). On cpu devices, and
// on cuda devices with `nccl`, it reduces every device's gradients itself; on other devices it
// reduces host copies of device 0's (already averaged over the devices), copied back to every
// device after.
void AddProcessAllreduces(const std::vector<Gradient>& gradients, const TrainingNets& dp,
                          const std::vector<DeviceOption>& devices,
                          const ProcessScaleOut& processes, NetDef* train) {
  const bool staged = !AllOnHost(devices) && !processes.nccl;
  const auto host_copy = [&](const std::string& gradient) {
    return "host/" + dp.OnDevice(0, gradient);
  };
  std::string previous;
  int64_t tag = 0;
  for (const std::vector<std::string>& bucket : Buckets(gradients, processes.bucket_bytes)) {
    OperatorDef reduce;
    reduce.set_type("ProcessAllreduce");
    reduce.set_name("process_allreduce_" + bucket.front());
    for (size_t d = 0; d < (staged ? 1 : devices.size()); ++d) {
      for (const std::string& gradient : bucket) {
        const std::string blob = staged ? host_copy(gradient) : dp.OnDevice(d, gradient);
        reduce.add_input(blob);
        reduce.add_output(blob);
      }
    }
    if (!previous.empty()) reduce.add_control_input(previous);
    previous = reduce.output(0);
    AddIntArg(&reduce, "tensors", static_cast<int64_t>(bucket.size()));
    // Gloo: a tag per bucket. NCCL: one tag, so one communicator, for the chain (its buckets never
    // run at once; ops/collective/process_allreduce_op.cu).
    AddIntArg(&reduce, "tag", processes.nccl ? 0 : tag++);
    AddStringArg(&reduce, "algorithm", processes.algorithm);
    AddIntArg(&reduce, "average", 1);
    AddIntArg(&reduce, "weight", 1);
    if (!staged) {
      *reduce.mutable_device_option() = devices[0];
      *train->add_op() = std::move(reduce);
      continue;
    }
    for (const std::string& gradient : bucket) {
      OperatorDef* to_host = train->add_op();
      to_host->set_type("CopyGPUToCPU");
      to_host->add_input(dp.OnDevice(0, gradient));
      to_host->add_output(host_copy(gradient));
      *to_host->mutable_device_option() = devices[0];
    }
    *train->add_op() = std::move(reduce);
    for (size_t d = 0; d < devices.size(); ++d) {
      for (const std::string& gradient : bucket) {
        OperatorDef* back = train->add_op();
        back->set_type("CopyCPUToGPU");
        back->add_input(host_copy(gradient));
        back->add_output(dp.OnDevice(d, gradient));
        *back->mutable_device_option() = devices[d];
      }
    }
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
  const std::vector<Gradient> gradients = GradientsInReadyOrder(single, dp.params);
  const bool nccl = processes.world_size > 1 && processes.nccl;
  if (processes.world_size == 1 || (!AllOnHost(devices) && !nccl)) {
    AddDeviceAllreduces(gradients, dp, devices, &train);
  }
  if (processes.world_size > 1) AddProcessAllreduces(gradients, dp, devices, processes, &train);
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
    SetIntArg(&scoped, "seed", static_cast<int64_t>(OpSeed(op)));
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
    if (!AllOnHost(devices) && std::any_of(devices.begin(), devices.end(), [](const auto& d) {
          return DeviceFromProto(d).is_host();
        })) {
      throw Error(Status::InvalidArgument(
          "multi-process training needs its devices all cpu or all accelerators (sim, cuda), "
          "not a mix"));
    }
    if (processes.nccl && !std::all_of(devices.begin(), devices.end(), [](const auto& d) {
          return DeviceFromProto(d).type == DeviceType::kCuda;
        })) {
      throw Error(Status::InvalidArgument("NCCL across processes needs cuda devices only"));
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
