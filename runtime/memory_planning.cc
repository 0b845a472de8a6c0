#include "runtime/memory_planning.h"

#include <algorithm>
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

// Fills each planned blob's region with NaN just before the op that first writes it, except where
// an input of that op starts at the same address (it dies in place into the blob).
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
        if (!SharesAnInputsStart(def.op(k), region_of, it->second))
          regions_[k].push_back(it->second);
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
  static bool SharesAnInputsStart(const OperatorDef& op,
                                  const std::map<std::string, Region>& region_of, const Region& r) {
    for (const std::string& in : op.input()) {
      auto it = region_of.find(in);
      if (it == region_of.end()) continue;
      if (it->second.begin == r.begin) return true;  // dies in place into r
    }
    return false;
  }

  std::vector<std::vector<Region>> regions_;  // per op; read-only after construction
};

std::shared_ptr<void> AllocateArena(const DeviceOption& option, int64_t bytes) {
  Allocator* allocator = GetAllocator(DeviceFromProto(option));
  const size_t size = static_cast<size_t>(std::max<int64_t>(bytes, 1));
  return std::shared_ptr<void>(allocator->Allocate(size),
                               [allocator, size](void* p) { allocator->Free(p, size); });
}

}  // namespace

PlanRequest PlanRequestFor(const NetDef& def, const Workspace& ws,
                           const MemoryPlanOptions& options) {
  PlanRequest request;
  request.blob_bytes = LargestWrittenBytes(def, ShapesOfWorkspaceBlobs(def, ws));
  request.keep = options.keep;
  for (const OperatorDef& op : def.op()) {
    const OpSchema* schema = FindSchema(op.type());
    request.inplace.emplace_back();
    if (schema == nullptr) continue;
    Device home;
    if (DeviceAtPlace(schema->output_place(), DeviceFromProto(op.device_option()), &home) &&
        !(home == DeviceFromProto(op.device_option()))) {
      for (const std::string& out : op.output()) {
        request.blob_devices.emplace(out, DeviceToProto(home));
      }
    }
    for (const auto& pair : schema->allowed_inplace()) request.inplace.back().push_back(pair);
    // An output enforced in place over an input the op was not given carries state from run to
    // run (Iter without input counts in its output): never recycle it.
    for (const auto& [in, out] : schema->enforced_inplace()) {
      if (in >= op.input_size() && out < op.output_size()) request.keep.insert(op.output(out));
    }
  }
  request.mode = options.mode;
  request.share_activations = options.share_activations;
  request.share_parameter_gradients = options.share_parameter_gradients;
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
      return lender->arena(static_cast<int>(i));
    }
  }
  return AllocateArena(arena.device, arena.arena_bytes);
}

// The lender's recycled blobs hold garbage between its runs and sit in memory the borrower plans
// over: a borrower may neither read nor write them.
void CheckTouchesNoBlobOf(const NetDef& def, const Workspace& ws,
                          const std::set<const Tensor*>& lent) {
  for (const OperatorDef& op : def.op()) {
    for (const auto* names : {&op.input(), &op.output(), &op.control_input()}) {
      for (const std::string& name : *names) {
        if (!lent.count(ws.GetBlob(name))) continue;
        throw Error(Status::InvalidArgument(
            "net '" + def.name() + "' uses blob '" + name + "', which the net whose arenas it " +
            "shares recycles; keep it there (MemoryPlanOptions::keep) or give it a name of its "
            "own"));
      }
    }
  }
}

}  // namespace

std::unique_ptr<NetMemory> PlanNetMemory(Net& net, Workspace* ws,
                                         const MemoryPlanOptions& options) {
  const NetDef& def = net.def();
  if (options.share_arenas_of != nullptr) {
    CheckTouchesNoBlobOf(def, *ws, options.share_arenas_of->bound_);
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
      tensor->SetExternalStorage(base + blob.offset, blob.bytes, memory->arenas_.back());
      memory->bound_.insert(tensor);
      if (DeviceFromProto(arena.device).type == DeviceType::kCuda) continue;  // not host-addressable
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
