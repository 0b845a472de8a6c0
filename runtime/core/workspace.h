// Workspace: owns blobs (tensors) by name and the nets created in it.
//
// A child workspace (made with a parent) resolves names it lacks in its parent, so a test net can
// read the train net's parameters; blobs it creates are its own. The parent must outlive the child.
//
//   Workspace ws;
//   ws.CreateBlob("x")->Resize(DType::kFloat32, {4});
//   Net* net = ws.CreateNet(net_def);      // validates; throws braid::Error on bad input
//   Status s = net->Run();
//
// Nets are built and run by the executors (runtime/exec/net.h), which sit above this header's room:
// they install NetHooks when libbraid loads, so a Workspace names Net only by its declaration.
//
// Thread safety: blob and net lookup/creation are guarded by a mutex, so they may be called from
// several threads. Tensors themselves are not synchronised (see runtime/core/tensor.h); ops resolve
// their tensors when a net is created and touch only those while it runs.
#ifndef BRAID_RUNTIME_CORE_WORKSPACE_H_
#define BRAID_RUNTIME_CORE_WORKSPACE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "braid/status.h"
#include "proto/braid.pb.h"
#include "runtime/core/tensor.h"

namespace braid {

class Net;
class Workspace;

// How a Workspace builds and runs nets: BuildNet and Net::Run (runtime/exec/net.h), installed by
// the executors once, while libbraid loads (InstallNetHooks), before any Workspace makes a net.
struct NetHooks {
  std::shared_ptr<Net> (*build)(const NetDef& def, Workspace* ws);  // throws braid::Error
  Status (*run)(Net& net);
};
void InstallNetHooks(NetHooks hooks);

class Workspace {
 public:
  Workspace();
  explicit Workspace(const Workspace* parent);
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // The blob called `name` here or in a parent; creates it here if none exists.
  Tensor* CreateBlob(const std::string& name);
  // This workspace's own blob called `name`, created here if it has none, even where a parent has
  // one (which it then hides from this workspace): for a blob each child must own, such as a
  // request's input that the parent also holds.
  Tensor* CreateLocalBlob(const std::string& name);
  // The blob here or in a parent, or null.
  Tensor* GetBlob(const std::string& name) const;
  bool HasBlob(const std::string& name) const { return GetBlob(name) != nullptr; }
  // Names of this workspace's own blobs, sorted.
  std::vector<std::string> LocalBlobNames() const;

  // Builds a net (replacing one of the same name, which is destroyed: no Run of it may be under
  // way, and pointers to it dangle). Throws braid::Error naming the net,
  // the op and the blob when the NetDef is invalid.
  Net* CreateNet(const NetDef& def);
  Net* GetNet(const std::string& name) const;
  // Creates, runs once and discards a net (an init net, typically).
  Status RunNetOnce(const NetDef& def);

 private:
  const Workspace* parent_ = nullptr;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<Tensor>> blobs_;  // guarded by mu_
  std::map<std::string, std::shared_ptr<Net>> nets_;      // guarded by mu_; owned here alone
};

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_WORKSPACE_H_
