#include "braid/session.h"

#include <glog/logging.h>
#include <pthread.h>

#include <cstring>
#include <shared_mutex>

#include "runtime/core/device_context.h"
#include "runtime/core/dims_text.h"
#include "runtime/core/element_count.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/memory_planning.h"
#include "runtime/exec/net.h"
#include "runtime/exec/run_stop.h"
#include "runtime/io/proto_io.h"
#include "runtime/serve/tensor_views.h"

namespace braid {

namespace {

// A reader-writer lock under which a waiting writer goes before readers that come after it
// (glibc's default lets a stream of readers keep a writer out for ever). Meets SharedMutex.
class WriterFirstMutex {
 public:
  WriterFirstMutex() {
    pthread_rwlockattr_t attributes;
    Must(pthread_rwlockattr_init(&attributes), "pthread_rwlockattr_init");
    Must(pthread_rwlockattr_setkind_np(&attributes, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP),
         "pthread_rwlockattr_setkind_np");
    Must(pthread_rwlock_init(&lock_, &attributes), "pthread_rwlock_init");
    Must(pthread_rwlockattr_destroy(&attributes), "pthread_rwlockattr_destroy");
  }
  ~WriterFirstMutex() { Must(pthread_rwlock_destroy(&lock_), "pthread_rwlock_destroy"); }
  WriterFirstMutex(const WriterFirstMutex&) = delete;
  WriterFirstMutex& operator=(const WriterFirstMutex&) = delete;

  void lock() { Must(pthread_rwlock_wrlock(&lock_), "pthread_rwlock_wrlock"); }
  void unlock() { Must(pthread_rwlock_unlock(&lock_), "pthread_rwlock_unlock"); }
  void lock_shared() { Must(pthread_rwlock_rdlock(&lock_), "pthread_rwlock_rdlock"); }
  void unlock_shared() { Must(pthread_rwlock_unlock(&lock_), "pthread_rwlock_unlock"); }

 private:
  static void Must(int rc, const char* call) {
    // Invariant: these calls fail only when the Session breaks its own locking rules (EDEADLK: a
    // thread locking twice; EAGAIN: too many readers), never on a caller's input.
    CHECK_EQ(rc, 0) << call << ": " << std::strerror(rc);
  }

  pthread_rwlock_t lock_;
};

}  // namespace

// A loaded net. `use` is held shared by a RunNet and exclusively by PlanMemory and by the LoadNet
// that replaces it, so neither changes a net that is running, and a RunNet that comes after them
// waits for them. A RunNet that finds the net retired (replaced while it waited) looks its name up
// again.
struct Session::LoadedNet {
  std::unique_ptr<Net> net;
  WriterFirstMutex use;
  std::unique_ptr<NetMemory> plan;  // guarded by use (exclusive)
  bool retired = false;             // guarded by use (written exclusive)
};

Session::Session() : workspace_(std::make_unique<Workspace>()) {}
Session::~Session() = default;

Status Session::SetDevice(const std::string& device) {
  return StatusFromCall([&] {
    GetDeviceContext(ParseDevice(device));  // refuses a device braid cannot use
    std::lock_guard<std::mutex> lock(mu_);
    device_ = device;
  });
}

std::string Session::device() const {
  std::lock_guard<std::mutex> lock(mu_);
  return device_;
}

Status Session::LoadOnDevice(const std::string& path, NetDef* def) const {
  const std::string device = this->device();
  return StatusFromCall([&] {
    *def = LoadNetDef(path);
    if (!device.empty() && !def->has_device_option()) {
      *def->mutable_device_option() = DeviceToProto(ParseDevice(device));
    }
  });
}

std::shared_ptr<Session::LoadedNet> Session::FindNet(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = nets_.find(name);
  return it == nets_.end() ? nullptr : it->second;
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
  // Replacing a net waits for its Run (its use lock, taken first: a LoadNet of another name does
  // not wait for it), and the old net is destroyed once no RunNet holds it. Publishing is one
  // LoadNet at a time: one that finds its name replaced meanwhile (by another LoadNet of it)
  // starts over with the new net.
  for (;;) {
    const std::shared_ptr<LoadedNet> old = FindNet(def.name());
    std::unique_lock<WriterFirstMutex> old_quiet;
    if (old != nullptr) old_quiet = std::unique_lock<WriterFirstMutex>(old->use);
    std::lock_guard<std::mutex> one_load(load_mu_);
    if (FindNet(def.name()) != old) continue;
    auto fresh = std::make_shared<LoadedNet>();
    Status built = StatusFromCall([&] { fresh->net = BuildNet(def, workspace_.get()); });
    if (!built.ok()) return built;
    {
      std::lock_guard<std::mutex> lock(mu_);
      nets_[def.name()] = std::move(fresh);
    }
    if (old != nullptr) old->retired = true;
    *net_name = def.name();
    return Status::OK();
  }
}

Status Session::RunNet(const std::string& net_name, int iterations) {
  return RunNet(net_name, iterations, RunOptions{});
}

Status Session::RunNet(const std::string& net_name, int iterations, const RunOptions& options) {
  const RunStop stop{options.deadline, options.stop};
  for (;;) {
    const std::shared_ptr<LoadedNet> entry = FindNet(net_name);
    if (entry == nullptr) {
      return Status::NotFound("no net named '" + net_name + "' in this session");
    }
    std::shared_lock<WriterFirstMutex> in_use(entry->use);
    if (entry->retired) continue;  // replaced while this call waited: run the new one
    for (int i = 0; i < iterations; ++i) {
      Status s = entry->net->Run(stop);
      if (!s.ok()) return s;
    }
    return Status::OK();
  }
}

Status Session::PlanMemory(const std::string& net_name, int64_t* planned_bytes,
                           int64_t* naive_bytes) {
  for (;;) {
    const std::shared_ptr<LoadedNet> entry = FindNet(net_name);
    if (entry == nullptr) {
      return Status::NotFound("no net named '" + net_name + "' in this session");
    }
    std::unique_lock<WriterFirstMutex> quiet(entry->use);  // no Run of the net meanwhile
    if (entry->retired) continue;
    return StatusFromCall([&] {
      // The old plan's arenas live on while its views do; the new plan rebinds them.
      entry->plan = PlanNetMemory(*entry->net, workspace_.get(), {});
      if (planned_bytes != nullptr) *planned_bytes = entry->plan->plan().arena_bytes();
      if (naive_bytes != nullptr) *naive_bytes = entry->plan->plan().naive_bytes();
    });
  }
}

Status Session::Feed(const std::string& name, const std::vector<int64_t>& shape,
                     const std::vector<float>& values) {
  const Status counted = StatusFromCall([&] {
    const int64_t numel = ElementCount(shape, DType::kFloat32);
    if (static_cast<size_t>(numel) != values.size()) {
      throw Error(Status::InvalidArgument("feeding blob '" + name + "': shape " + DimsText(shape) +
                                          " needs " + std::to_string(numel) + " values, got " +
                                          std::to_string(values.size())));
    }
  });
  if (!counted.ok()) return counted;
  return Feed(name, InputView::Of(values.data(), shape));
}

Status Session::Feed(const std::string& name, const InputView& input) {
  return StatusFromCall([&] {
    const Tensor given = ViewOf(input, "feeding blob '" + name + "'");
    WaitForWriters(MarkWriters({{name, input}}, "session"), RunStop{}, "session");
    const std::string device = this->device();
    Tensor* t = workspace_->CreateBlob(name);
    if (!t->has_storage() && !device.empty()) *t = Tensor(ParseDevice(device));
    t->CopyFrom(given);
  });
}

Status Session::Fetch(const std::string& name, std::vector<int64_t>* shape,
                      std::vector<float>* values) const {
  OutputTensor out;
  const Status fetched = Fetch(name, &out);
  if (!fetched.ok()) return fetched;
  if (out.dtype != DType::kFloat32) {
    return Status::InvalidArgument("blob '" + name + "' is " + DTypeName(out.dtype) +
                                   ", not float32: fetch it as an OutputTensor");
  }
  const int64_t numel = out.numel();
  const float* data = out.data<float>();
  values->assign(data, data + numel);
  *shape = std::move(out.shape);
  return Status::OK();
}

Status Session::Fetch(const std::string& name, OutputTensor* output) const {
  const Tensor* t = workspace_->GetBlob(name);
  if (t == nullptr) return Status::NotFound("no blob named '" + name + "' in this session");
  return StatusFromCall([&] { CopyOut(*t, output); });
}

Status Session::Fetch(const std::string& name, OutputView* output) const {
  const Tensor* t = workspace_->GetBlob(name);
  if (t == nullptr) return Status::NotFound("no blob named '" + name + "' in this session");
  return StatusFromCall([&] {
    CheckFits(*t, output, "fetching blob '" + name + "'");
    CopyOut(*t, *output);
  });
}

std::vector<std::string> Session::BlobNames() const { return workspace_->LocalBlobNames(); }

}  // namespace braid
