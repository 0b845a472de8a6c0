#include "runtime/core/op_schema.h"

#include <algorithm>
#include <map>
#include <memory>

#include <glog/logging.h>

#include "braid/status.h"
#include "runtime/core/element_count.h"

namespace braid {
namespace {

std::map<std::string, std::unique_ptr<OpSchema>>& Schemas() {
  static auto* schemas = new std::map<std::string, std::unique_ptr<OpSchema>>();
  return *schemas;
}

std::string Range(int min, int max) {
  if (min == max) return std::to_string(min);
  if (max == OpSchema::kUnbounded) return "at least " + std::to_string(min);
  return std::to_string(min) + " to " + std::to_string(max);
}

}  // namespace

int64_t ShapeInfo::numel() const { return ElementCount(dims); }

OpSchema& OpSchema::NumInputs(int min, int max) {
  min_inputs_ = min;
  max_inputs_ = max;
  return *this;
}

OpSchema& OpSchema::NumOutputs(int min, int max) {
  min_outputs_ = min;
  max_outputs_ = max;
  return *this;
}

OpSchema& OpSchema::AllowInplace(std::set<std::pair<int, int>> pairs) {
  allowed_inplace_.insert(pairs.begin(), pairs.end());
  return *this;
}

OpSchema& OpSchema::EnforceInplace(std::set<std::pair<int, int>> pairs) {
  allowed_inplace_.insert(pairs.begin(), pairs.end());
  enforced_inplace_.insert(pairs.begin(), pairs.end());
  return *this;
}

OpSchema& OpSchema::TensorInference(ShapeFunction fn) {
  shape_fn_ = std::move(fn);
  return *this;
}

OpSchema& OpSchema::IdenticalTypeAndShape() {
  return TensorInference([](const OperatorDef& op, const std::vector<ShapeInfo>& in) {
    std::vector<ShapeInfo> out(op.output_size());
    for (int i = 0; i < op.output_size() && !in.empty(); ++i) {
      out[i] = in[i < static_cast<int>(in.size()) ? i : 0];
    }
    return out;
  });
}

OpSchema& OpSchema::BlockedPorts(std::function<LayoutPorts(const OperatorDef&)> ports) {
  blocked_ports_ = std::move(ports);
  return *this;
}

OpSchema& OpSchema::LayoutFollowsInputs() {
  layout_follows_inputs_ = true;
  return *this;
}

OpSchema& OpSchema::PackedInput(int index, PackFunction pack) {
  packed_inputs_[index] = std::move(pack);
  return *this;
}

const OpSchema::PackFunction* OpSchema::packed_input(int index) const {
  auto it = packed_inputs_.find(index);
  return it == packed_inputs_.end() ? nullptr : &it->second;
}

OpSchema::LayoutPorts OpSchema::BlockedPortsOf(const OperatorDef& op) const {
  if (blocked_ports_) return blocked_ports_(op);
  LayoutPorts ports;
  if (!layout_follows_inputs_) return ports;
  for (int i = 0; i < op.input_size(); ++i) ports.inputs.push_back(i);
  for (int o = 0; o < op.output_size(); ++o) ports.outputs.push_back(o);
  return ports;
}

OpSchema& OpSchema::InputsOn(BlobPlace place) {
  input_place_ = place;
  return *this;
}

OpSchema& OpSchema::OutputsOn(BlobPlace place) {
  output_place_ = place;
  return *this;
}

OpSchema& OpSchema::HostOnly() {
  host_only_ = true;
  return *this;
}

bool PlaceReaches(BlobPlace place, const Device& op_device, const Device& blob_device) {
  switch (place) {
    case BlobPlace::kOpDevice:
      return SameMemory(op_device, blob_device);
    case BlobPlace::kHost:
      return blob_device.is_host();
    case BlobPlace::kAnyDevice:
      return true;
  }
  return false;
}

bool DeviceAtPlace(BlobPlace place, const Device& op_device, Device* device) {
  switch (place) {
    case BlobPlace::kOpDevice:
      *device = op_device;
      return true;
    case BlobPlace::kHost:
      *device = op_device.is_host() ? op_device : Device{};
      return true;
    case BlobPlace::kAnyDevice:
      return false;
  }
  return false;
}

OpSchema& OpSchema::Collective() {
  collective_ = true;
  return *this;
}

OpSchema& OpSchema::WaitsForOtherProcesses() {
  waits_for_other_processes_ = true;
  return Collective();
}

OpSchema& OpSchema::AllocatesLazily() {
  allocates_lazily_ = true;
  return *this;
}

OpSchema& OpSchema::Arg(std::string name, ArgKind kinds) {
  return Args({ArgSpec{std::move(name), kinds}});
}

OpSchema& OpSchema::Args(const std::vector<ArgSpec>& specs) {
  for (const ArgSpec& spec : specs) {
    const bool repeated = std::any_of(args_.begin(), args_.end(),
                                      [&](const ArgSpec& a) { return a.name == spec.name; });
    // Invariant: a schema declares each argument once, at static initialisation.
    CHECK(!repeated) << "op schema '" << type_ << "' declares argument '" << spec.name << "' twice";
    args_.push_back(spec);
  }
  args_declared_ = true;
  return *this;
}

OpSchema& OpSchema::ArgsOf(std::string type) {
  args_of_ = std::move(type);
  args_declared_ = true;
  return *this;
}

OpSchema& OpSchema::NoArgs() {
  args_declared_ = true;
  return *this;
}

OpSchema& OpSchema::AnyArgs() {
  any_args_ = true;
  args_declared_ = true;
  return *this;
}

const std::vector<ArgSpec>& CommonOpArgs() {
  static const auto* common = new std::vector<ArgSpec>{
      {kBlockedOutputsArg, ArgKind::kInts},
      {kChannelBlockArg, ArgKind::kInt},
      {kSeedArg, ArgKind::kInt},
  };
  return *common;
}

AcceptedArgs OpSchema::accepted_args() const {
  AcceptedArgs accepted;
  accepted.groups.push_back(&CommonOpArgs());
  // ArgsOf chains are short (gradient -> forward); the bound guards against a cycle.
  const OpSchema* schema = this;
  for (int depth = 0; schema != nullptr && depth < 8; ++depth) {
    accepted.groups.push_back(&schema->args_);
    accepted.any_name = accepted.any_name || schema->any_args_;
    if (schema->args_of_.empty()) break;
    schema = FindSchema(schema->args_of_);
  }
  return accepted;
}

std::string OpSchema::VerifyArgs(const OperatorDef& op, std::vector<std::string>* unknown) const {
  return CheckArguments(op.arg(), accepted_args(), unknown);
}

OpSchema& OpSchema::SetDoc(std::string doc) {
  doc_ = std::move(doc);
  return *this;
}

bool OpSchema::inplace_allowed(int input, int output) const {
  return allowed_inplace_.count({input, output}) > 0;
}

bool OpSchema::inplace_enforced(int input, int output) const {
  return enforced_inplace_.count({input, output}) > 0;
}

std::string OpSchema::Verify(const OperatorDef& op) const {
  if (op.input_size() < min_inputs_ || op.input_size() > max_inputs_) {
    return "takes " + Range(min_inputs_, max_inputs_) + " inputs, got " +
           std::to_string(op.input_size());
  }
  if (op.output_size() < min_outputs_ || op.output_size() > max_outputs_) {
    return "takes " + Range(min_outputs_, max_outputs_) + " outputs, got " +
           std::to_string(op.output_size());
  }
  for (int i = 0; i < op.input_size(); ++i) {
    for (int o = 0; o < op.output_size(); ++o) {
      bool same = op.input(i) == op.output(o);
      if (same && !inplace_allowed(i, o)) {
        return "input " + std::to_string(i) + " and output " + std::to_string(o) +
               " are the same blob '" + op.input(i) + "', which " + type_ + " does not allow in-place";
      }
      if (!same && inplace_enforced(i, o)) {
        return "input " + std::to_string(i) + " ('" + op.input(i) + "') and output " +
               std::to_string(o) + " ('" + op.output(o) + "') must be the same blob";
      }
    }
  }
  for (const Argument& arg : op.arg()) {
    if (arg.name() == kChannelBlockArg && arg.i() != 8 && arg.i() != 16) {
      return std::string(kChannelBlockArg) + " is " + std::to_string(arg.i()) +
             "; a blocked layout has 8 or 16 channels per block";
    }
    if (arg.name() != kBlockedOutputsArg) continue;
    const std::vector<int> ports = BlockedPortsOf(op).outputs;
    for (int64_t o : arg.ints()) {
      if (layout_follows_inputs_ || std::find(ports.begin(), ports.end(), o) == ports.end()) {
        return std::string(kBlockedOutputsArg) + " names output " + std::to_string(o) + ", which " +
               type_ + " does not write in the blocked layout";
      }
    }
  }
  return "";
}

std::vector<ShapeInfo> OpSchema::InferShapes(const OperatorDef& op,
                                             const std::vector<ShapeInfo>& in) const {
  if (!shape_fn_) return std::vector<ShapeInfo>(op.output_size());
  for (const ShapeInfo& s : in) {
    if (!s.known) return std::vector<ShapeInfo>(op.output_size());
  }
  std::vector<ShapeInfo> out = shape_fn_(op, in);
  out.resize(op.output_size());
  for (size_t o = 0; o < out.size(); ++o) {
    if (!out[o].known) continue;
    try {
      ElementCount(out[o].dims, out[o].dtype);
    } catch (const Error& e) {
      throw Error(Status(e.status().code(), "output '" + op.output(static_cast<int>(o)) +
                                                "': " + e.status().message()));
    }
  }
  return out;
}

const OpSchema* FindSchema(const std::string& type) {
  auto it = Schemas().find(type);
  return it == Schemas().end() ? nullptr : it->second.get();
}

std::vector<std::string> RegisteredOpTypes() {
  std::vector<std::string> types;
  for (const auto& [type, schema] : Schemas()) types.push_back(type);
  return types;
}

std::vector<std::string> ClosestOpTypes(const std::string& type, size_t n) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& [name, schema] : Schemas()) scored.emplace_back(EditDistance(type, name), name);
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> names;
  for (size_t i = 0; i < scored.size() && i < n; ++i) names.push_back(scored[i].second);
  return names;
}

OpSchema& RegisterSchema(const std::string& type) {
  auto& slot = Schemas()[type];
  // Invariant: each op type registers one schema, at static initialisation.
  CHECK(!slot) << "op schema '" << type << "' registered twice";
  slot = std::make_unique<OpSchema>(type);
  return *slot;
}

}  // namespace braid
