#include "runtime/core/op_registry.h"

#include <map>
#include <tuple>

#include <glog/logging.h>

#include "braid/status.h"
#include "runtime/core/op_schema.h"

namespace braid {
namespace {

using Key = std::tuple<std::string, DeviceType, std::string>;

std::map<Key, OperatorCreator>& Kernels() {
  static auto* kernels = new std::map<Key, OperatorCreator>();
  return *kernels;
}

// The device type whose kernels run ops of `type` on `device`: its own, or the CPU's on sim.
DeviceType KernelDevice(const std::string& type, DeviceType device) {
  if (device != DeviceType::kSim || Kernels().count(Key{type, device, ""}) > 0) return device;
  const OpSchema* schema = FindSchema(type);
  return schema != nullptr && schema->host_only() ? device : DeviceType::kCpu;
}

}  // namespace

bool RegisterOperator(const std::string& type, DeviceType device, const std::string& engine,
                      OperatorCreator creator) {
  bool inserted = Kernels().emplace(Key{type, device, engine}, std::move(creator)).second;
  // Invariant: each (type, device, engine) registers one kernel, at static initialisation.
  CHECK(inserted) << "kernel " << type << " (" << DeviceTypeName(device) << ", engine '" << engine
                  << "') registered twice";
  return true;
}

bool HasKernel(const std::string& type, DeviceType device) {
  return Kernels().count(Key{type, KernelDevice(type, device), ""}) > 0;
}

std::vector<std::string> KernelTypes(DeviceType device) {
  std::vector<std::string> types;
  for (const auto& [key, creator] : Kernels()) {
    const auto& [type, kernel_device, engine] = key;
    if (kernel_device == device && (types.empty() || types.back() != type)) types.push_back(type);
  }
  return types;
}

std::unique_ptr<OperatorBase> CreateOperator(const OperatorDef& def, Workspace* ws) {
  const DeviceType device = DeviceFromProto(def.device_option()).type;
  const DeviceType kernels = KernelDevice(def.type(), device);
  auto it = Kernels().find(Key{def.type(), kernels, def.engine()});
  if (it == Kernels().end()) it = Kernels().find(Key{def.type(), kernels, ""});
  if (it == Kernels().end()) {
    throw Error(Status::NotFound(std::string("no ") + DeviceTypeName(device) + " kernel for op type '" +
                                 def.type() + "'"));
  }
  return it->second(def, ws);
}

}  // namespace braid
