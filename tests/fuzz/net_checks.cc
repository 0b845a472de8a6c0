#include "fuzz/net_checks.h"

#include <glog/logging.h>

#include <cstdio>
#include <cstdlib>

#include "braid/status.h"
#include "fuzz/refusal.h"
#include "planner/memory_plan.h"
#include "planner/verify_plan.h"
#include "runtime/core/device.h"
#include "runtime/core/shape_inference.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/memory_planning.h"

namespace braid::fuzz {
namespace {

bool BoundedDevice(const DeviceOption& option) {
  const Device device = DeviceFromProto(option);
  return device.is_host() || (device.type == DeviceType::kSim && device.id == 0);
}

// See the header: what building may not be tried on.
bool Buildable(const NetDef& net) {
  if (net.has_device_option() && !BoundedDevice(net.device_option())) return false;
  for (const OperatorDef& op : net.op()) {
    if (op.type() == "IdxImageInput" || op.type() == "TensorProtosDBInput") return false;
    if (op.has_device_option() && !BoundedDevice(op.device_option())) return false;
  }
  return true;
}

}  // namespace

void PlanAndBuild(const NetDef& net, const std::map<std::string, ShapeInfo>& known) {
  try {
    const PlanRequest request = PlanRequestFor(net, known, MemoryPlanOptions{});
    const MemoryPlan plan = PlanMemory(net, request);
    const std::string error = VerifyMemoryPlan(net, request, plan);
    if (!error.empty()) {
      std::fprintf(stderr, "the planner's plan fails its checker: %s\n", error.c_str());
      std::abort();
    }
  } catch (const Error& e) {
    Refused(e.status());
  }
  bool buildable = false;
  try {
    buildable = Buildable(net);  // DeviceFromProto refuses an unknown device type
  } catch (const Error&) {
  }
  if (!buildable) return;
  try {
    Workspace ws;
    for (const std::string& name : net.external_input()) ws.CreateBlob(name);
    ws.CreateNet(net);
  } catch (const Error& e) {
    Refused(e.status());
  }
}

std::map<std::string, ShapeInfo> ShapesFilledBy(const NetDef& init_net) {
  try {
    return InferBlobShapes(init_net, {});
  } catch (const Error& e) {
    Refused(e.status());
    return {};
  }
}

void QuietLogging() {
  FLAGS_minloglevel = google::GLOG_FATAL;
  FLAGS_logtostderr = true;
}

}  // namespace braid::fuzz
