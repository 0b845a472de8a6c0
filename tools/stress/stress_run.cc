#include "tools/stress/stress_run.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "braid/status.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/memory_planning.h"
#include "runtime/exec/net.h"
#include "runtime/exec/observer.h"

namespace braid {
namespace {

std::vector<std::string> Outputs(const NetDef& def, const Workspace& ws) {
  std::vector<std::string> out;
  for (const std::string& name : def.external_output()) {
    Tensor host;  // from whichever device holds it
    host.CopyFrom(*ws.GetBlob(name));
    out.emplace_back(static_cast<const char*>(host.raw_data()), host.nbytes());
  }
  return out;
}

NetDef WithExecutor(NetDef def, const std::string& type, int workers) {
  def.set_type(type);
  Argument* arg = def.add_arg();
  arg->set_name("num_workers");
  arg->set_i(workers);
  return def;
}

// What a net's runs reached: the most of its ops seen running at once (their start-to-end spans
// overlapping, host ops and kernels on device streams alike) and the most threads that ran its ops
// in one run. OnRunEnd is called on the Run's thread, after the run: the caller reads them once
// Run has returned.
class ConcurrencyReached final : public NetObserver {
 public:
  void OnRunEnd(const Net&, const std::vector<OpEvent>& events) override {
    std::vector<std::pair<int64_t, int>> edges;  // (time, +1 start / -1 end); ends sort first
    std::set<int> threads;
    for (const OpEvent& e : events) {
      if (!e.ran()) continue;
      edges.emplace_back(e.start_ns, 1);
      edges.emplace_back(e.end_ns, -1);
      threads.insert(e.thread);
    }
    std::sort(edges.begin(), edges.end());
    int running = 0;
    for (const auto& [time, change] : edges) ops_ = std::max(ops_, running += change);
    threads_ = std::max(threads_, static_cast<int>(threads.size()));
  }
  int ops() const { return ops_; }
  int threads() const { return threads_; }

 private:
  int ops_ = 0;
  int threads_ = 0;
};

// Everything a planned case needs, kept alive until its runs end (a hung run still uses it).
struct PlannedCase {
  Workspace ws;
  Net* net = nullptr;
  std::unique_ptr<NetMemory> memory;
  ConcurrencyReached concurrency;
};

}  // namespace

StressResult RunStressCase(const NetDef& def, int workers, int iterations, double hang_seconds) {
  StressResult result;
  Status status = StatusFromCall([&] {
    Workspace reference_ws;
    Net* reference = reference_ws.CreateNet(WithExecutor(def, "simple", 1));
    std::vector<std::vector<std::string>> expected;  // per run: random fills differ run to run
    Status s;
    for (int i = 0; i < iterations; ++i) {
      s = reference->Run();
      if (!s.ok()) throw Error(s);
      expected.push_back(Outputs(def, reference_ws));
    }

    auto planned = std::make_shared<PlannedCase>();
    planned->net = planned->ws.CreateNet(WithExecutor(def, "dag", workers));
    planned->net->AddObserver(&planned->concurrency);
    MemoryPlanOptions options;
    options.verify = true;
    options.poison = true;
    planned->memory = PlanNetMemory(*planned->net, &planned->ws, options);
    result.arena_bytes = planned->memory->plan().arena_bytes();
    result.naive_bytes = planned->memory->plan().naive_bytes();
    for (int i = 0; i < iterations; ++i) {
      // A hung run keeps `planned` alive through its own copy of the pointer.
      std::future<Status> run =
          std::async(std::launch::async, [planned] { return planned->net->Run(); });
      if (run.wait_for(std::chrono::duration<double>(hang_seconds)) != std::future_status::ready) {
        result.hang = true;
        std::thread([f = std::move(run)]() mutable { f.wait(); }).detach();
        return;
      }
      s = run.get();
      if (!s.ok()) throw Error(s);
      ++result.iterations;
      result.most_ops_at_once = planned->concurrency.ops();
      result.most_threads = planned->concurrency.threads();
      if (Outputs(def, planned->ws) != expected[i]) ++result.mismatches;
    }
  });
  if (!status.ok()) result.error = status.ToString();
  return result;
}

}  // namespace braid
