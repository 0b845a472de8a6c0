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
//
// Sharing (MemoryPlanOptions::share_arenas_of, Caffe's train/test nets): a second net that never
// runs at the same time as the first plans into the first net's arena on each device. Where it
// needs more, the shared arena grows as a capacity-aware Caffe blob does: the old arena is
// released and one of the larger size replaces it for both nets (a device holds only the larger),
// the lender's views re-pointed at their planned offsets in it, its poisoning following. That is
// safe because only recycled blobs live in arenas (their bytes are garbage between runs;
// parameters, momenta and kept blobs never live there) and because growing happens while neither
// net runs:
//
//   std::unique_ptr<NetMemory> train_memory = PlanNetMemory(*train, &ws, train_options);
//   MemoryPlanOptions test_options;
//   test_options.share_arenas_of = train_memory.get();  // may grow train_memory's arenas
//   std::unique_ptr<NetMemory> test_memory = PlanNetMemory(*test, &test_ws, test_options);
//   // test_memory->allocated_bytes(): what the test net needs beyond the train net's arenas
//
// Thread safety: PlanRequestFor reads the workspace's tensors (its overload of known shapes is
// pure): not while a net writes them. PlanNetMemory binds the net's tensors and may grow the
// arenas it shares: call it only while neither its net nor a net sharing its arenas runs (Session
// and the Predictor serialise them so). A NetMemory belongs to its net; its const accessors may be
// read from any thread between those calls.
#ifndef BRAID_RUNTIME_EXEC_MEMORY_PLANNING_H_
#define BRAID_RUNTIME_EXEC_MEMORY_PLANNING_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "planner/memory_plan.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/tensor.h"
#include "runtime/exec/observer.h"

namespace braid {

class Net;
class Workspace;
class NetMemory;

struct MemoryPlanOptions {
  PlanMode mode = PlanMode::kInference;
  bool share_activations = false;  // training mode: recycle activations too
  // Recycle parameter gradients too (planner/memory_plan.h): they are garbage after a Run.
  bool share_parameter_gradients = false;
  std::set<std::string> keep{};    // never recycled (besides external inputs and outputs)
#ifdef NDEBUG
  bool verify = false;
#else
  bool verify = true;
#endif
  // Fill each blob's arena bytes with NaN just before the op that first writes it, every run, so a
  // plan that shares memory wrongly shows up as wrong numbers (stress testing; costs time).
  bool poison = false;
  // Plan into this other net's arenas instead of new ones (Caffe's train/test sharing: a test net
  // run between training iterations reuses the train net's activation memory; file comment).
  // The caller promises:
  //   - the two nets never run at the same time and share no recyclable blob name;
  //   - while PlanNetMemory runs, the lender's net is idle (on sim or cuda: its Run returned), no
  //     other thread uses the lender, and the lender's workspace still holds its tensors.
  // Arenas: on a device where the lender has none, this plan gets its own; where it needs more
  // than the lender's, the lender's arena is replaced by a larger one for both. If that
  // allocation fails PlanNetMemory throws, and the lender's views get an arena of the old size
  // again (failing that, none: they allocate their own on their next write). A third net planned
  // into the lender earlier keeps the old arena (valid, no longer shared).
  NetMemory* share_arenas_of = nullptr;
};

// A net's plan and the arenas backing it.
class NetMemory {
 public:
  const MemoryPlan& plan() const { return plan_; }
  // Arena i's memory (plan().arenas[i]); shared with views and with nets planned into it
  // (MemoryPlanOptions::share_arenas_of). A borrower that grows it replaces it here.
  const std::shared_ptr<void>& arena(int i) const { return arenas_.at(i); }
  // Bytes of arena i's memory: plan().arenas[i].arena_bytes, or more when it is shared with a
  // larger plan (borrowed from a larger lender, or grown by a borrower).
  int64_t arena_bytes(int i) const { return arena_bytes_.at(i); }
  // Bytes this plan added to the arenas: the sizes of arenas of its own, and for each arena shared
  // with share_arenas_of only the growth (this plan's size less the lender's arena's, 0 when it
  // fits). A lender keeps reporting what it allocated itself, so summed over a lender and its
  // borrowers this is the size of their arenas.
  int64_t allocated_bytes() const { return allocated_bytes_; }

 private:
  // A planned blob's tensor, a view of `bytes` bytes at `offset` in its arena.
  struct View {
    Tensor* tensor;  // owned by the workspace
    int64_t offset;
    int64_t bytes;
  };

  NetMemory() = default;
  // The index of the arena on `device`, or -1.
  int ArenaOn(const DeviceOption& device) const;
  // Appends the memory for `arena`: lender's arena on its device (grown first if smaller), or a
  // new one when the lender is null or has none there.
  void AddArena(const ArenaPlan& arena, NetMemory* lender);
  // Replaces arena i by one of `bytes` bytes and re-points its views at their offsets in it. The
  // old memory is released first (unless another net still views it). If the larger one cannot be
  // allocated, the views get an arena of the old size again and the allocation's error is thrown.
  // The net must not be running.
  void GrowArena(int i, int64_t bytes);

  MemoryPlan plan_;
  std::vector<std::shared_ptr<void>> arenas_;
  std::vector<int64_t> arena_bytes_;      // per arena: its memory's size
  std::vector<std::vector<View>> views_;  // per arena: the tensors made views into it
  std::set<const Tensor*> bound_;         // the tensors made views into arenas_
  int64_t allocated_bytes_ = 0;
  std::unique_ptr<NetObserver> poisoner_;  // attached to the net when options.poison
  friend std::unique_ptr<NetMemory> PlanNetMemory(Net&, Workspace*, const MemoryPlanOptions&);
};

// The planner's input for `def` in `ws`: blob sizes from shape inference, in-place pairs from the
// op schemas, the executor from def.type.
PlanRequest PlanRequestFor(const NetDef& def, const Workspace& ws,
                           const MemoryPlanOptions& options);
// The same from the shapes of the blobs `def` reads first (e.g. InferBlobShapes of its init net),
// with no workspace: what a prediction made before anything runs plans (runtime/models'
// training_footprint.h).
PlanRequest PlanRequestFor(const NetDef& def, const std::map<std::string, ShapeInfo>& known,
                           const MemoryPlanOptions& options);

// Plans and binds `net`'s blobs in `ws` (see the file comment). With options.poison the returned
// object observes the net and must outlive its runs.
std::unique_ptr<NetMemory> PlanNetMemory(Net& net, Workspace* ws, const MemoryPlanOptions& options);

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_MEMORY_PLANNING_H_
