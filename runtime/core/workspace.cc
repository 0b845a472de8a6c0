#include "runtime/core/workspace.h"

#include <glog/logging.h>

#include <atomic>

namespace braid {
namespace {

// Written once by InstallNetHooks, then published by g_net_hooks_installed (release/acquire).
NetHooks g_net_hooks;
std::atomic<bool> g_net_hooks_installed{false};

const NetHooks& Hooks() {
  // Invariant: runtime/exec/net.cc installs the hooks while libbraid loads, before main.
  CHECK(g_net_hooks_installed.load(std::memory_order_acquire))
      << "a Workspace made a net before runtime/exec/net.cc installed the executors' NetHooks: "
         "during static initialisation, or in a program linked without net.o";
  return g_net_hooks;
}

}  // namespace

void InstallNetHooks(NetHooks hooks) {
  // Invariant: one installer (runtime/exec/net.cc), once, with both hooks.
  CHECK(hooks.build != nullptr && hooks.run != nullptr && !g_net_hooks_installed.load())
      << "NetHooks installed twice or incomplete";
  g_net_hooks = hooks;
  g_net_hooks_installed.store(true, std::memory_order_release);
}

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
