#include "runtime/session.h"

#include <cstring>

#include "runtime/device_context.h"
#include "runtime/memory_planning.h"
#include "runtime/net.h"
#include "runtime/proto_io.h"
#include "runtime/workspace.h"

namespace braid {

Session::Session() : workspace_(std::make_unique<Workspace>()) {}
Session::~Session() = default;

Status Session::SetDevice(const std::string& device) {
  return StatusFromCall([&] {
    GetDeviceContext(ParseDevice(device));  // refuses a device braid cannot use
    device_ = device;
  });
}

Status Session::LoadOnDevice(const std::string& path, NetDef* def) const {
  return StatusFromCall([&] {
    *def = LoadNetDef(path);
    if (!device_.empty() && !def->has_device_option()) {
      *def->mutable_device_option() = DeviceToProto(ParseDevice(device_));
    }
  });
}

Status Session::RunNetOnce(const std::string& net_path) {
  NetDef def;
  Status loaded = LoadOnDevice(net_path, &def);
  if (!loaded.ok()) return loaded;
  return workspace_->RunNetOnce(def);
}

Status Session::LoadNet(const std::string& net_path, std::string* net_name) {
  NetDef def;
  Status loaded = LoadOnDevice(net_path, &def);
  if (!loaded.ok()) return loaded;
  return StatusFromCall([&] {
    workspace_->CreateNet(def);
    *net_name = def.name();
  });
}

Status Session::RunNet(const std::string& net_name, int iterations) {
  Net* net = workspace_->GetNet(net_name);
  if (net == nullptr) return Status::NotFound("no net named '" + net_name + "' in this session");
  for (int i = 0; i < iterations; ++i) {
    Status s = net->Run();
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status Session::PlanMemory(const std::string& net_name, int64_t* planned_bytes,
                           int64_t* naive_bytes) {
  Net* net = workspace_->GetNet(net_name);
  if (net == nullptr) return Status::NotFound("no net named '" + net_name + "' in this session");
  return StatusFromCall([&] {
    plans_.push_back(PlanNetMemory(*net, workspace_.get(), {}));
    if (planned_bytes != nullptr) *planned_bytes = plans_.back()->plan().arena_bytes();
    if (naive_bytes != nullptr) *naive_bytes = plans_.back()->plan().naive_bytes();
  });
}

Status Session::Feed(const std::string& name, const std::vector<int64_t>& shape,
                     const std::vector<float>& values) {
  return StatusFromCall([&] {
    Tensor host(DType::kFloat32, shape);
    if (static_cast<size_t>(host.numel()) != values.size()) {
      throw Error(Status::InvalidArgument("feeding blob '" + name + "': shape " +
                                          host.ShapeString() + " needs " +
                                          std::to_string(host.numel()) + " values, got " +
                                          std::to_string(values.size())));
    }
    std::memcpy(host.mutable_data<float>(), values.data(), values.size() * sizeof(float));
    Tensor* t = workspace_->CreateBlob(name);
    if (!t->has_storage() && !device_.empty()) *t = Tensor(ParseDevice(device_));
    t->CopyFrom(host);
  });
}

Status Session::Fetch(const std::string& name, std::vector<int64_t>* shape,
                      std::vector<float>* values) const {
  const Tensor* t = workspace_->GetBlob(name);
  if (t == nullptr) return Status::NotFound("no blob named '" + name + "' in this session");
  return StatusFromCall([&] {
    Tensor host;
    host.CopyFrom(*t);
    const float* data = host.data<float>();
    *shape = host.shape();
    values->assign(data, data + host.numel());
  });
}

std::vector<std::string> Session::BlobNames() const { return workspace_->LocalBlobNames(); }

}  // namespace braid
