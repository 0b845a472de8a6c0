#include "tools/stress/stress_run.h"

#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "runtime/memory_planning.h"
#include "runtime/net.h"
#include "runtime/status.h"
#include "runtime/workspace.h"

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

// Everything a planned case needs, kept alive until its runs end (a hung run still uses it).
struct PlannedCase {
  Workspace ws;
  Net* net = nullptr;
  std::unique_ptr<NetMemory> memory;
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
      if (Outputs(def, planned->ws) != expected[i]) ++result.mismatches;
    }
  });
  if (!status.ok()) result.error = status.ToString();
  return result;
}

}  // namespace braid
