#include "runtime/exec/net_validation.h"

#include <glog/logging.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <unordered_set>
#include <utility>

#include "braid/status.h"
#include "runtime/core/argument.h"
#include "runtime/core/op_label.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net_args.h"

namespace braid {
namespace {

[[noreturn]] void Fail(StatusCode code, const NetDef& net, int i, const std::string& what) {
  throw Error(Status(code, OpLabelOf(net, i) + ": " + what));
}

std::string Joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// One glog warning per op type and argument name in the process, naming the first op.
void WarnIgnoredOnce(const NetDef& net, int i, const std::string& name) {
  const std::string& type = net.op(i).type();
  static std::mutex mu;
  static auto* const warned = new std::set<std::pair<std::string, std::string>>();  // guarded by mu
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!warned->emplace(type, name).second) return;
  }
  LOG(WARNING) << OpLabelOf(net, i) << ": argument '" << name << "' is ignored: " << type
               << " does not take it (net argument strict_args: 1 makes it an error; later "
               << type << " ops with it are not reported)";
}

void ValidateOp(const NetDef& net, int i, const Workspace& ws,
                const std::unordered_set<std::string>& produced) {
  const OperatorDef& op = net.op(i);
  const OpSchema* schema = FindSchema(op.type());
  if (schema == nullptr) {
    Fail(StatusCode::kNotFound, net, i,
         "unknown op type '" + op.type() + "'; closest known: " + Joined(ClosestOpTypes(op.type())));
  }
  std::vector<std::string> unknown;
  const bool strict = ArgumentReader(net.arg()).Get<bool>(kStrictArgsArg, false);
  std::string problem = schema->VerifyArgs(op, strict ? nullptr : &unknown);
  for (const std::string& name : unknown) WarnIgnoredOnce(net, i, name);
  if (problem.empty()) problem = schema->Verify(op);
  if (!problem.empty()) Fail(StatusCode::kInvalidArgument, net, i, problem);
  Device device;
  try {
    device = DeviceFromProto(op.device_option());
  } catch (const Error& e) {
    Fail(e.status().code(), net, i, e.status().message());
  }
  if (schema->host_only() && !device.is_host()) {
    Fail(StatusCode::kInvalidArgument, net, i,
         op.type() + " runs on the host only, not on " + device.ToString() +
             ": give it a cpu device_option and copy what it writes to the device");
  }
  if (!HasKernel(op.type(), device.type)) {
    Fail(StatusCode::kNotFound, net, i, "no kernel for device " + device.ToString());
  }
  auto require = [&](const std::string& blob, const char* role) {
    if (produced.count(blob) == 0 && !ws.HasBlob(blob)) {
      Fail(StatusCode::kNotFound, net, i,
           std::string(role) + " blob '" + blob +
               "' does not exist in the workspace, is not an external_input, and no earlier op "
               "produces it");
    }
  };
  for (const std::string& in : op.input()) require(in, "input");
  for (const std::string& ctl : op.control_input()) require(ctl, "control input");
}

// See the header: blobs the net may hold blocked, and an op reading one outside its ports.
void CheckBlockedReaders(const NetDef& net) {
  std::map<std::string, int> blocked;  // blob -> an op writing it blocked
  for (int i = 0; i < net.op_size(); ++i) {
    const OperatorDef& op = net.op(i);
    for (const Argument& arg : op.arg()) {
      if (arg.name() != kBlockedOutputsArg) continue;
      for (int64_t o : arg.ints()) blocked.emplace(op.output(static_cast<int>(o)), i);
    }
  }
  for (bool grew = !blocked.empty(); grew;) {  // through elementwise ops, to a fixed point
    grew = false;
    for (int i = 0; i < net.op_size(); ++i) {
      const OperatorDef& op = net.op(i);
      if (!FindSchema(op.type())->layout_follows_inputs()) continue;
      const bool reads_blocked = std::any_of(op.input().begin(), op.input().end(),
                                             [&](const auto& in) { return blocked.count(in); });
      if (!reads_blocked) continue;
      for (const std::string& out : op.output()) grew = blocked.emplace(out, i).second || grew;
    }
  }
  if (blocked.empty()) return;
  for (int i = 0; i < net.op_size(); ++i) {
    const OperatorDef& op = net.op(i);
    const std::vector<int> ports = FindSchema(op.type())->BlockedPortsOf(op).inputs;
    for (int in = 0; in < op.input_size(); ++in) {
      const auto it = blocked.find(op.input(in));
      if (it == blocked.end() || std::find(ports.begin(), ports.end(), in) != ports.end()) continue;
      Fail(StatusCode::kInvalidArgument, net, i,
           "input '" + op.input(in) + "' may be blocked (" + OpLabelOf(net, it->second) +
               " writes it in the blocked layout), but " + op.type() +
               " reads it in the plain layout only");
    }
  }
}

// See the header: every blob an op reads lives where its schema places the op's inputs, and every
// blob lives on one device.
void CheckBlobDevices(const NetDef& net, const Workspace& ws) {
  struct Home {
    Device device;
    int writer;  // the op of this net writing it there; -1: the workspace holds it there
  };
  std::map<std::string, Home> homes;
  auto home_of = [&](const std::string& blob, Home* home) {
    auto it = homes.find(blob);
    if (it != homes.end()) {
      *home = it->second;
      return true;
    }
    const Tensor* t = ws.GetBlob(blob);
    if (t == nullptr || !t->has_storage()) return false;
    *home = {t->device(), -1};
    return true;
  };
  auto where = [&](const std::string& blob, const Home& home) {
    return "blob '" + blob + "' is on " + home.device.ToString() +
           (home.writer < 0 ? "" : " (written there by op #" + std::to_string(home.writer) + ")");
  };
  for (int i = 0; i < net.op_size(); ++i) {
    const OperatorDef& op = net.op(i);
    const OpSchema* schema = FindSchema(op.type());
    const Device device = DeviceFromProto(op.device_option());
    Device wanted;
    DeviceAtPlace(schema->input_place(), device, &wanted);
    Home home;
    for (const std::string& in : op.input()) {
      if (!home_of(in, &home) || PlaceReaches(schema->input_place(), device, home.device)) continue;
      Fail(StatusCode::kInvalidArgument, net, i,
           where(in, home) + "; copy it to " + wanted.ToString() + " first");
    }
    Device target;
    if (!DeviceAtPlace(schema->output_place(), device, &target)) continue;
    for (const std::string& out : op.output()) {
      if (home_of(out, &home) && !SameMemory(target, home.device)) {
        Fail(StatusCode::kInvalidArgument, net, i,
             where(out, home) + ", and " + op.type() + " would write it on " + target.ToString() +
                 ": a blob lives on one device (write a copy under another name)");
      }
      homes[out] = {target, i};
    }
  }
}

}  // namespace

NetDef WithNetDeviceOption(const NetDef& net) {
  NetDef out = net;
  if (!net.has_device_option()) return out;
  for (OperatorDef& op : *out.mutable_op()) {
    if (!op.has_device_option()) *op.mutable_device_option() = net.device_option();
  }
  return out;
}

void ValidateNet(const NetDef& net, const Workspace& ws) {
  CheckNetArgs(net);
  // Declared external inputs count as present: the caller feeds them before Run (Net checks).
  std::unordered_set<std::string> produced(net.external_input().begin(), net.external_input().end());
  for (int i = 0; i < net.op_size(); ++i) {
    ValidateOp(net, i, ws, produced);
    for (const std::string& out : net.op(i).output()) produced.insert(out);
  }
  for (const std::string& out : net.external_output()) {
    if (produced.count(out) == 0 && !ws.HasBlob(out)) {
      throw Error(Status::NotFound("net '" + net.name() + "': external output '" + out +
                                   "' is neither produced by an op nor in the workspace"));
    }
  }
  CheckBlobDevices(net, ws);
  CheckBlockedReaders(net);
}

}  // namespace braid
