#include "runtime/memory_planning.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "planner/verify_plan.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/net.h"
#include "runtime/op_schema.h"
#include "runtime/shape_inference.h"
#include "runtime/status.h"
#include "runtime/workspace.h"

namespace braid {
namespace {

struct Region {
  char* begin;
  size_t bytes;
};

// Fills each planned blob's region with NaN just before the op that first writes it. A region the
// op also reads (an input dying in place into the blob) is left alone.
class Poisoner : public NetObserver {
 public:
  Poisoner(const NetDef& def, const std::vector<std::pair<std::string, Region>>& placed)
      : regions_(def.op_size()) {
    std::map<std::string, Region> region_of(placed.begin(), placed.end());
    std::set<std::string> born;
    for (int k = 0; k < def.op_size(); ++k) {
      for (const std::string& out : def.op(k).output()) {
        auto it = region_of.find(out);
        if (it == region_of.end() || !born.insert(out).second) continue;
        if (!OverlapsAnInput(def.op(k), region_of, it->second)) regions_[k].push_back(it->second);
      }
    }
  }

  void OnOpStart(const Net& /*net*/, int op) override {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (const Region& r : regions_[op]) {
      float* p = reinterpret_cast<float*>(r.begin);
      std::fill(p, p + r.bytes / sizeof(float), nan);
    }
  }
  void OnRunEnd(const Net&, const std::vector<OpEvent>&) override {}

 private:
  static bool OverlapsAnInput(const OperatorDef& op, const std::map<std::string, Region>& region_of,
                              const Region& r) {
    for (const std::string& in : op.input()) {
      auto it = region_of.find(in);
      if (it == region_of.end()) continue;
      const Region& q = it->second;
      if (q.begin < r.begin + r.bytes && r.begin < q.begin + q.bytes) return true;
    }
    return false;
  }

  std::vector<std::vector<Region>> regions_;  // per op; read-only after construction
};

std::shared_ptr<void> AllocateArena(const DeviceOption& option, int64_t bytes) {
  Allocator* allocator = GetAllocator(DeviceFromProto(option).type);
  const size_t size = static_cast<size_t>(std::max<int64_t>(bytes, 1));
  return std::shared_ptr<void>(allocator->Allocate(size),
                               [allocator, size](void* p) { allocator->Free(p, size); });
}

}  // namespace

PlanRequest PlanRequestFor(const NetDef& def, const Workspace& ws,
                           const MemoryPlanOptions& options) {
  PlanRequest request;
  for (const auto& [name, shape] : InferBlobShapes(def, ShapesOfWorkspaceBlobs(def, ws))) {
    if (shape.known) request.blob_bytes[name] = static_cast<int64_t>(shape.nbytes());
  }
  for (const OperatorDef& op : def.op()) {
    const OpSchema* schema = FindSchema(op.type());
    request.inplace.emplace_back();
    if (schema == nullptr) continue;
    for (const auto& pair : schema->allowed_inplace()) request.inplace.back().push_back(pair);
  }
  request.keep = options.keep;
  request.mode = options.mode;
  request.share_activations = options.share_activations;
  request.executor = def.type() == "dag" ? PlanExecutor::kDag : PlanExecutor::kSimple;
  request.alignment = static_cast<int64_t>(kCpuAlignment);
  return request;
}

namespace {

// The memory for `arena`: the matching arena of `lender` if it is big enough, else a new one.
std::shared_ptr<void> ArenaFor(const ArenaPlan& arena, const NetMemory* lender, bool* borrowed) {
  *borrowed = false;
  if (lender != nullptr) {
    const std::vector<ArenaPlan>& theirs = lender->plan().arenas;
    for (size_t i = 0; i < theirs.size(); ++i) {
      if (theirs[i].device.SerializeAsString() != arena.device.SerializeAsString()) continue;
      if (theirs[i].arena_bytes < arena.arena_bytes) break;
      *borrowed = true;
      return lender->shared_arena(static_cast<int>(i));
    }
  }
  return AllocateArena(arena.device, arena.arena_bytes);
}

// The lender's recycled blobs hold garbage between its runs: a borrower may not read them.
void CheckReadsNoBlobOf(const NetDef& def, const Workspace& ws,
                        const std::set<const Tensor*>& lent) {
  for (const OperatorDef& op : def.op()) {
    for (const std::string& in : op.input()) {
      if (lent.count(ws.GetBlob(in))) {
        throw Error(Status::InvalidArgument(
            "net '" + def.name() + "' reads blob '" + in + "', which the net whose arenas it " +
            "shares recycles; keep it there (MemoryPlanOptions::keep)"));
      }
    }
  }
}

}  // namespace

std::unique_ptr<NetMemory> PlanNetMemory(Net& net, Workspace* ws,
                                         const MemoryPlanOptions& options) {
  const NetDef& def = net.def();
  if (options.share_arenas_of != nullptr) {
    CheckReadsNoBlobOf(def, *ws, options.share_arenas_of->bound_);
  }
  PlanRequest request = PlanRequestFor(def, *ws, options);
  std::unique_ptr<NetMemory> memory(new NetMemory);
  memory->plan_ = PlanMemory(def, request);
  if (options.verify) {
    std::string error = VerifyMemoryPlan(def, request, memory->plan_);
    if (!error.empty()) throw Error(Status::Internal("memory plan rejected: " + error));
  }
  std::vector<std::pair<std::string, Region>> placed;
  for (const ArenaPlan& arena : memory->plan_.arenas) {
    bool borrowed = false;
    memory->arenas_.push_back(ArenaFor(arena, options.share_arenas_of, &borrowed));
    if (!borrowed) memory->allocated_bytes_ += arena.arena_bytes;
    char* base = static_cast<char*>(memory->arenas_.back().get());
    for (const BlobOffset& blob : arena.blobs) {
      Tensor* tensor = ws->CreateBlob(blob.blob);
      if (options.share_arenas_of != nullptr && options.share_arenas_of->bound_.count(tensor)) {
        throw Error(Status::InvalidArgument(
            "net '" + def.name() + "': blob '" + blob.blob +
            "' is also planned by the net whose arenas it shares; give it a name of its own"));
      }
      tensor->SetExternalStorage(base + blob.offset, blob.bytes, memory->arenas_.back());
      memory->bound_.insert(tensor);
      if (DeviceFromProto(arena.device).type != DeviceType::kCpu)
        continue;  // poisoned on host only
      placed.push_back({blob.blob, Region{base + blob.offset, static_cast<size_t>(blob.bytes)}});
    }
  }
  if (options.poison) {
    memory->poisoner_ = std::make_unique<Poisoner>(def, placed);
    net.AddObserver(memory->poisoner_.get());
  }
  return memory;
}

}  // namespace braid
