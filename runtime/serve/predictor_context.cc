#include "runtime/serve/predictor_context.h"

#include <algorithm>
#include <map>
#include <set>

#include "runtime/core/dims_text.h"
#include "runtime/core/shape_inference.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/memory_planning.h"
#include "runtime/exec/net.h"
#include "runtime/models/blocked_layouts.h"
#include "runtime/serve/tensor_views.h"

namespace braid {
namespace {

// "float32[1,3,224,224];int64[1]": the dtypes and shapes of the inputs, in the spec's order.
std::string Signature(const std::vector<std::string>& names,
                      const std::map<std::string, InputView>& inputs) {
  std::string key;
  for (const std::string& name : names) {
    const InputView& view = inputs.at(name);
    key += DTypeName(view.dtype);
    key += DimsText(view.shape) + ";";
  }
  return key;
}

}  // namespace

PredictorContext::PredictorContext(const Workspace* parameters, const PredictorSpec* spec)
    : parameters_(parameters), spec_(spec) {}

PredictorContext::~PredictorContext() = default;

void PredictorContext::Feed(const std::map<std::string, InputView>& inputs,
                            const Prepared& prepared) {
  for (size_t i = 0; i < spec_->input_names.size(); ++i) {
    const std::string& name = spec_->input_names[i];
    const InputView& view = inputs.at(name);
    Tensor* blob = prepared.inputs[i];
    const Tensor given = TensorOver(view);
    if (SameMemory(spec_->device, given.device()) && !spec_->inputs_the_net_writes.count(name)) {
      blob->Resize(view.dtype, view.shape);
      blob->SetExternalStorage(const_cast<void*>(view.data), blob->nbytes());
    } else {
      const bool lent = blob->storage() != nullptr && blob->storage()->is_view();
      if (lent) blob->FreeMemory();  // never copy into a past caller's memory
      blob->CopyFrom(given);
    }
  }
}

PredictorContext::Prepared& PredictorContext::FindOrPrepare(
    const std::map<std::string, InputView>& inputs) {
  const std::string key = Signature(spec_->input_names, inputs);
  auto found = prepared_.find(key);
  if (found != prepared_.end()) return found->second;

  Prepared prepared;
  prepared.ws = std::make_unique<Workspace>(parameters_);
  for (const std::string& name : spec_->input_names) {
    Tensor* blob = prepared.ws->CreateLocalBlob(name);  // never the init net's, which contexts share
    *blob = Tensor(spec_->device);
    prepared.inputs.push_back(blob);
  }
  Feed(inputs, prepared);  // shape inference (layouts, the plan) reads the inputs' shapes
  NetDef def = spec_->predict_net;
  if (spec_->device.is_host()) {
    // Activations between oneDNN ops stay in its blocked layout: no reorders around them, and no
    // scratch for blocked copies in the context.
    UseBlockedLayouts(&def, ShapesOfWorkspaceBlobs(def, *prepared.ws));
  }
  prepared.net = prepared.ws->CreateNet(def);
  MakeRoomForOneMore();  // first: a plan about to go is not bound again
  if (spec_->plan_memory) Plan(&prepared);
  ++plans_;
  Prepared& held = prepared_.emplace(key, std::move(prepared)).first->second;
  if (arena_owner_ == nullptr) arena_owner_ = held.memory.get();
  built_nets_ = static_cast<int>(prepared_.size());
  return held;
}

void PredictorContext::MakeRoomForOneMore() {
  if (static_cast<int>(prepared_.size()) < spec_->max_input_shapes) return;
  auto oldest = prepared_.end();
  for (auto it = prepared_.begin(); it != prepared_.end(); ++it) {
    if (it->second.memory != nullptr && it->second.memory.get() == arena_owner_) continue;
    if (oldest == prepared_.end() || it->second.last_used < oldest->second.last_used) oldest = it;
  }
  if (oldest != prepared_.end()) prepared_.erase(oldest);
}

void PredictorContext::Plan(Prepared* prepared) {
  MemoryPlanOptions options;
  options.share_arenas_of = arena_owner_;
  prepared->memory = PlanNetMemory(*prepared->net, prepared->ws.get(), options);
  if (arena_owner_ != nullptr) {
    // A plan that grew the first plan's arenas left the plans made into the old ones viewing them
    // (and keeping them alive), as did any growth that failed before. Plan each such one again
    // into the first plan's arenas, where it fits, so the old memory goes.
    std::set<const void*> current;
    for (size_t i = 0; i < arena_owner_->plan().arenas.size(); ++i) {
      current.insert(arena_owner_->arena(static_cast<int>(i)).get());
    }
    for (auto& [signature, other] : prepared_) {
      if (other.memory == nullptr || other.memory.get() == arena_owner_) continue;
      bool stale = false;
      for (size_t i = 0; i < other.memory->plan().arenas.size(); ++i) {
        stale = stale || !current.count(other.memory->arena(static_cast<int>(i)).get());
      }
      if (stale) other.memory = PlanNetMemory(*other.net, other.ws.get(), options);
    }
  }
  lower_bound_bytes_ =
      std::max(lower_bound_bytes_.load(), prepared->memory->plan().lower_bound_bytes());
  // The bytes held: each arena once, however many plans view it.
  std::map<const void*, int64_t> arenas;
  auto count = [&arenas](const NetMemory& memory) {
    for (size_t i = 0; i < memory.plan().arenas.size(); ++i) {
      arenas[memory.arena(static_cast<int>(i)).get()] = memory.arena_bytes(static_cast<int>(i));
    }
  };
  count(*prepared->memory);
  for (const auto& [signature, other] : prepared_) {
    if (other.memory != nullptr) count(*other.memory);
  }
  int64_t bytes = 0;
  for (const auto& [base, size] : arenas) bytes += size;
  arena_bytes_ = bytes;
}

void PredictorContext::Run(const std::map<std::string, InputView>& inputs,
                           const StreamMarks& writers, const RunStop& stop,
                           const OutputSink& deliver) {
  WaitForWriters(writers, stop, "net '" + spec_->predict_net.name() + "'");
  Prepared& prepared = FindOrPrepare(inputs);
  prepared.last_used = ++runs_;
  Feed(inputs, prepared);
  const Status status = prepared.net->Run(stop);
  if (!status.ok()) throw Error(status);
  int64_t scratch = 0;
  for (const auto& [signature, each] : prepared_) scratch += each.net->scratch_bytes();
  scratch_bytes_ = scratch;
  if (stop.Fired()) {  // during the last op: the answer came too late (or is no longer wanted)
    throw Error(stop.Why("net '" + prepared.net->name() + "' ran every op, its outputs dropped"));
  }
  OutputValues values;
  for (const std::string& name : spec_->output_names) {
    const Tensor* tensor = prepared.ws->GetBlob(name);
    if (tensor == nullptr || (tensor->numel() > 0 && !tensor->has_storage())) {
      throw Error(Status::Internal("net '" + prepared.net->name() + "': external output '" + name +
                                   "' was never written"));
    }
    values[name] = tensor;
  }
  deliver(values);
}

}  // namespace braid
