#include "runtime/core/workspace.h"

#include <glog/logging.h>

namespace braid {
namespace {

NetHooks g_net_hooks;  // written once while libbraid loads, before any thread reads it

const NetHooks& Hooks() {
  // Invariant: runtime/exec/net.cc installs the hooks at static initialisation, and libbraid links it.
  CHECK(g_net_hooks.build != nullptr && g_net_hooks.run != nullptr) << "no executor installed";
  return g_net_hooks;
}

}  // namespace

void InstallNetHooks(NetHooks hooks) { g_net_hooks = hooks; }

Workspace::Workspace() = default;
Workspace::Workspace(const Workspace* parent) : parent_(parent) {}
Workspace::~Workspace() {
  // Nets hold pointers into blobs_; destroy them first.
  nets_.clear();
}

Tensor* Workspace::CreateBlob(const std::string& name) {
  if (Tensor* existing = GetBlob(name)) return existing;
  return CreateLocalBlob(name);
}

Tensor* Workspace::CreateLocalBlob(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = blobs_[name];
  if (!slot) slot = std::make_unique<Tensor>();
  return slot.get();
}

Tensor* Workspace::GetBlob(const std::string& name) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blobs_.find(name);
    if (it != blobs_.end()) return it->second.get();
  }
  return parent_ ? parent_->GetBlob(name) : nullptr;
}

std::vector<std::string> Workspace::LocalBlobNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, tensor] : blobs_) names.push_back(name);
  return names;
}

Net* Workspace::CreateNet(const NetDef& def) {
  std::shared_ptr<Net> net = Hooks().build(def, this);
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = nets_[def.name()];
  slot = std::move(net);
  return slot.get();
}

Net* Workspace::GetNet(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = nets_.find(name);
  return it == nets_.end() ? nullptr : it->second.get();
}

Status Workspace::RunNetOnce(const NetDef& def) {
  std::shared_ptr<Net> net;
  Status built = StatusFromCall([&] { net = Hooks().build(def, this); });
  if (!built.ok()) return built;
  return Hooks().run(*net);
}

}  // namespace braid
