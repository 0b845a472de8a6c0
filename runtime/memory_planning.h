// Planning a built net's memory and binding its recyclable blobs into one arena per device.
//
// PlanNetMemory asks the op schemas for sizes (net-level shape inference from the workspace's
// blobs) and in-place pairs, runs the planner (planner/memory_plan.h), verifies the plan with the
// independent checker (planner/verify_plan.h) when options.verify is set (the default in debug
// builds), allocates each arena once from its device's allocator and makes every planned blob a
// view into it. Blobs whose size shape inference cannot tell keep their own storage. Afterwards
// running the net allocates nothing for planned blobs; a kernel writing more bytes than planned
// fails with a braid::Error naming the op instead of overrunning.
//
//   Net* net = ws.CreateNet(def);                     // after the init net ran
//   std::unique_ptr<NetMemory> memory = PlanNetMemory(*net, &ws, {});
//   net->Run();
//
// The arenas live as long as any view onto them (tensors keep them alive), so NetMemory may be
// dropped early unless it poisons. Plan while the net is not running. Throws braid::Error when the
// plan fails verification or the net's shapes are inconsistent.
#ifndef BRAID_RUNTIME_MEMORY_PLANNING_H_
#define BRAID_RUNTIME_MEMORY_PLANNING_H_

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "planner/memory_plan.h"
#include "runtime/observer.h"
#include "runtime/tensor.h"

namespace braid {

class Net;
class Workspace;
class NetMemory;

struct MemoryPlanOptions {
  PlanMode mode = PlanMode::kInference;
  bool share_activations = false;  // training mode: recycle activations too
  // Recycle parameter gradients too (planner/memory_plan.h): they are garbage after a Run.
  bool share_parameter_gradients = false;
  std::set<std::string> keep;      // never recycled (besides external inputs and outputs)
#ifdef NDEBUG
  bool verify = false;
#else
  bool verify = true;
#endif
  // Fill each blob's arena bytes with NaN just before the op that first writes it, every run, so a
  // plan that shares memory wrongly shows up as wrong numbers (stress testing; costs time).
  bool poison = false;
  // Plan into this other net's arenas instead of new ones (Caffe's train/test sharing: a test net
  // run between training iterations reuses the train net's activation memory). The two nets must
  // never run at the same time and may not share recyclable blob names. An arena too small for
  // this plan is replaced by one of this plan's own.
  const NetMemory* share_arenas_of = nullptr;
};

// A net's plan and the arenas backing it.
class NetMemory {
 public:
  const MemoryPlan& plan() const { return plan_; }
  // Arena i's memory (plan().arenas[i]); shared with views and with nets planned into it
  // (MemoryPlanOptions::share_arenas_of).
  const std::shared_ptr<void>& arena(int i) const { return arenas_.at(i); }
  // Bytes this plan allocated: its arenas' sizes, minus those it borrowed (share_arenas_of).
  int64_t allocated_bytes() const { return allocated_bytes_; }

 private:
  NetMemory() = default;

  MemoryPlan plan_;
  std::vector<std::shared_ptr<void>> arenas_;
  std::set<const Tensor*> bound_;  // the tensors made views into arenas_
  int64_t allocated_bytes_ = 0;
  std::unique_ptr<NetObserver> poisoner_;  // attached to the net when options.poison
  friend std::unique_ptr<NetMemory> PlanNetMemory(Net&, Workspace*, const MemoryPlanOptions&);
};

// The planner's input for `def` in `ws`: blob sizes from shape inference, in-place pairs from the
// op schemas, the executor from def.type.
PlanRequest PlanRequestFor(const NetDef& def, const Workspace& ws,
                           const MemoryPlanOptions& options);

// Plans and binds `net`'s blobs in `ws` (see the file comment). With options.poison the returned
// object observes the net and must outlive its runs.
std::unique_ptr<NetMemory> PlanNetMemory(Net& net, Workspace* ws, const MemoryPlanOptions& options);

}  // namespace braid

#endif  // BRAID_RUNTIME_MEMORY_PLANNING_H_
