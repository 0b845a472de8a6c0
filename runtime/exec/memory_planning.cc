#include "runtime/exec/memory_planning.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <map>
#include <set>

#include "braid/status.h"
#include "planner/verify_plan.h"
#include "runtime/core/allocator.h"
#include "runtime/core/autodiff.h"
#include "runtime/core/device.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/shape_inference.h"
#include "runtime/core/workspace.h"
#include "runtime/device/caching_allocator.h"
#include "runtime/exec/launch_plan.h"
#include "runtime/exec/net.h"

namespace braid {
namespace {

// The advice a planned blob's error ends with when a run needs it larger than its plan.
constexpr char kPlannedForOtherShapes[] =
    "the blob's memory was planned for smaller input shapes; plan the net's memory again for "
    "these shapes (Session::PlanMemory; a Predictor plans each new input shape itself)";

// Where a planned blob lives: arena `arena` of its NetMemory, `offset` bytes in. Resolved at each
// use, so the regions follow an arena that a borrower grows (NetMemory::GrowArena).
struct Region {
  int arena;
  int64_t offset;
  size_t bytes;
  bool operator==(const Region& other) const {
    return arena == other.arena && offset == other.offset;
  }
};

// Fills each planned blob's region with NaN just before the op that first writes it, except where
// an input of that op starts at the same address (it dies in place into the blob).
class Poisoner : public NetObserver {
 public:
  Poisoner(const NetDef& def, const std::vector<std::pair<std::string, Region>>& placed,
           const std::vector<std::shared_ptr<void>>* arenas)
      : regions_(def.op_size()), arenas_(arenas) {
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
      char* base = static_cast<char*>((*arenas_)[r.arena].get());
      if (base == nullptr) continue;  // a failed growth left no arena (NetMemory::GrowArena)
      float* p = reinterpret_cast<float*>(base + r.offset);
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
      if (it->second == r) return true;  // dies in place into r
    }
    return false;
  }

  std::vector<std::vector<Region>> regions_;  // per op; read-only after construction
  // The owning NetMemory's arenas: changed only while its net is not running.
  const std::vector<std::shared_ptr<void>>* arenas_;
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
  return PlanRequestFor(def, ShapesOfWorkspaceBlobs(def, ws), options);
}

PlanRequest PlanRequestFor(const NetDef& def, const std::map<std::string, ShapeInfo>& known,
                           const MemoryPlanOptions& options) {
  PlanRequest request;
  request.blob_bytes = LargestWrittenBytes(def, known);
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
  for (const OperatorDef& op : def.op()) {
    for (const std::string& out : op.output()) {
      std::string of;
      if (GradientNameOf(out, &of)) request.gradients.emplace(out, of);
    }
  }
  request.mode = options.mode;
  request.share_activations = options.share_activations;
  request.share_parameter_gradients = options.share_parameter_gradients;
  // The simple executor runs host ops in listed order, but it only launches device ops: kernels on
  // different devices (and the host ops beside them) run at once, so with any device op the
  // listed order is not the schedule and only the dataflow DAG's order holds.
  const bool listed_order_is_schedule = def.type() != "dag" && !LaunchPlan::NeedsPlan(def);
  request.executor = listed_order_is_schedule ? PlanExecutor::kSimple : PlanExecutor::kDag;
  request.alignment = static_cast<int64_t>(kCpuAlignment);
  return request;
}

namespace {

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

int NetMemory::ArenaOn(const DeviceOption& device) const {
  for (size_t i = 0; i < plan_.arenas.size(); ++i) {
    if (plan_.arenas[i].device.SerializeAsString() == device.SerializeAsString()) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void NetMemory::AddArena(const ArenaPlan& arena, NetMemory* lender) {
  const int lent = lender == nullptr ? -1 : lender->ArenaOn(arena.device);
  if (lent < 0) {
    arenas_.push_back(AllocateArena(arena.device, arena.arena_bytes));
    arena_bytes_.push_back(arena.arena_bytes);
    allocated_bytes_ += arena.arena_bytes;
    return;
  }
  const int64_t lent_bytes = lender->arena_bytes_[lent];
  if (lent_bytes < arena.arena_bytes) {
    lender->GrowArena(lent, arena.arena_bytes);
    allocated_bytes_ += arena.arena_bytes - lent_bytes;
  }
  arenas_.push_back(lender->arenas_[lent]);
  arena_bytes_.push_back(lender->arena_bytes_[lent]);
}

void NetMemory::GrowArena(int i, int64_t bytes) {
  // Released before the larger one is allocated, as a Caffe blob frees before it grows: the
  // device's peak is the larger size, not both.
  const char* old_base = static_cast<const char*>(arenas_[i].get());
  std::vector<const View*> moving;
  for (const View& view : views_[i]) {
    const std::shared_ptr<Storage>& storage = view.tensor->storage();
    if (storage == nullptr || storage->data() != old_base + view.offset) continue;  // left it
    moving.push_back(&view);
    view.tensor->FreeMemory();
  }
  const int64_t old_bytes = arena_bytes_[i];
  arenas_[i].reset();   // the old memory goes here unless another net still views it
  arena_bytes_[i] = 0;  // until one is allocated; should none be, a later borrower allocates it
  const DeviceOption& device = plan_.arenas[i].device;
  // A caching allocator would keep the old arena cached beside the new one: give it back.
  if (CachingAllocator* cache = CachingAllocatorOf(DeviceFromProto(device))) cache->ReleaseCache();
  std::exception_ptr failure;
  try {
    arenas_[i] = AllocateArena(device, bytes);
    arena_bytes_[i] = bytes;
  } catch (...) {
    failure = std::current_exception();
    arenas_[i] = AllocateArena(device, old_bytes);  // fits where the old one was released
    arena_bytes_[i] = old_bytes;
  }
  char* base = static_cast<char*>(arenas_[i].get());
  for (const View* view : moving) {
    view->tensor->SetExternalStorage(base + view->offset, static_cast<size_t>(view->bytes),
                                     arenas_[i], kPlannedForOtherShapes);
  }
  if (failure != nullptr) std::rethrow_exception(failure);
}

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
    const int i = static_cast<int>(memory->arenas_.size());
    memory->AddArena(arena, options.share_arenas_of);
    memory->views_.emplace_back();
    char* base = static_cast<char*>(memory->arenas_.back().get());
    for (const BlobOffset& blob : arena.blobs) {
      Tensor* tensor = ws->CreateBlob(blob.blob);
      tensor->SetExternalStorage(base + blob.offset, blob.bytes, memory->arenas_.back(),
                                 kPlannedForOtherShapes);
      memory->bound_.insert(tensor);
      memory->views_.back().push_back({tensor, blob.offset, blob.bytes});
      if (DeviceFromProto(arena.device).type == DeviceType::kCuda) continue;  // not host-addressable
      placed.push_back({blob.blob, Region{i, blob.offset, static_cast<size_t>(blob.bytes)}});
    }
  }
  if (options.poison) {
    memory->poisoner_ = std::make_unique<Poisoner>(def, placed, &memory->arenas_);
    net.AddObserver(memory->poisoner_.get());
  }
  return memory;
}

}  // namespace braid
