// The kernel registry: which class implements an op type on a device type with an engine.
//
// Kernels register with one line at the end of their .cc file:
//   BRAID_REGISTER_CPU_OPERATOR(Relu, ReluOp);
//   BRAID_REGISTER_OPERATOR(Conv, kCpu, "DNNL", ConvDnnlOp);
// CreateOperator looks up (type, device type, engine) and falls back to the default engine ("")
// when the requested engine is not registered, as Caffe2 does. A sim device
// (runtime/device/sim/sim_device.h) runs the CPU kernel of every op that has no sim kernel of its
// own, unless the op's schema says HostOnly.
//
// Thread safety: registration happens during static initialisation; lookups are read-only.
#ifndef BRAID_RUNTIME_CORE_OP_REGISTRY_H_
#define BRAID_RUNTIME_CORE_OP_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/device.h"
#include "runtime/core/operator.h"

namespace braid {

using OperatorCreator = std::function<std::unique_ptr<OperatorBase>(const OperatorDef&, Workspace*)>;

bool RegisterOperator(const std::string& type, DeviceType device, const std::string& engine,
                      OperatorCreator creator);
// Whether an op of `type` can run on `device` (counting a sim device's fallback to CPU kernels).
bool HasKernel(const std::string& type, DeviceType device);
// The op types with a kernel of their own for `device` (any engine), sorted; no sim fallbacks.
std::vector<std::string> KernelTypes(DeviceType device);
// Throws braid::Error when no kernel exists for the op's type and device.
std::unique_ptr<OperatorBase> CreateOperator(const OperatorDef& def, Workspace* ws);

#define BRAID_REGISTRY_CONCAT_(a, b) a##b
#define BRAID_REGISTRY_NAME_(type, line) BRAID_REGISTRY_CONCAT_(braid_kernel_##type##_, line)
#define BRAID_REGISTER_OPERATOR(type, device, engine, ...)                                   \
  [[maybe_unused]] static const bool BRAID_REGISTRY_NAME_(type, __LINE__) =                 \
      ::braid::RegisterOperator(#type, ::braid::DeviceType::device, engine,                 \
                                [](const ::braid::OperatorDef& def, ::braid::Workspace* ws) \
                                    -> std::unique_ptr<::braid::OperatorBase> {             \
                                  return std::make_unique<__VA_ARGS__>(def, ws);           \
                                })
#define BRAID_REGISTER_CPU_OPERATOR(type, ...) BRAID_REGISTER_OPERATOR(type, kCpu, "", __VA_ARGS__)

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_OP_REGISTRY_H_
