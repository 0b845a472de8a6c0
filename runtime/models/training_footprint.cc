#include "runtime/models/training_footprint.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "planner/memory_plan.h"
#include "runtime/core/device.h"
#include "runtime/core/shape_inference.h"
#include "runtime/device/caching_allocator.h"
#include "runtime/device/caching_allocator_model.h"
#include "runtime/models/resnet_training.h"

namespace braid {
namespace {

enum class Kind { kParameter, kGradient, kMomentum, kOther };

// The footprints being predicted, one per device, each with its allocator's replay.
class Ledger {
 public:
  explicit Ledger(int64_t workspace_cap) : workspace_cap_(workspace_cap) {}

  // The device's entry, or null for the host (not device memory).
  DeviceFootprint* On(const DeviceOption& option) {
    const Device device = DeviceFromProto(option);
    if (device.is_host()) return nullptr;
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (devices_[i] == device) return &footprints_[i];
    }
    devices_.push_back(device);
    footprints_.emplace_back();
    models_.emplace_back();
    DeviceFootprint& f = footprints_.back();
    f.device = option;
    f.workspace_cap = workspace_cap_;
    f.workspace_on_device = device.type == DeviceType::kCuda;
    return &f;
  }
  CachingAllocatorModel& ModelOf(const DeviceFootprint* f) {
    return models_[static_cast<size_t>(f - footprints_.data())];
  }
  // One allocation of `bytes` for a blob of `kind` that lives for the run.
  void Keep(const DeviceOption& option, Kind kind, int64_t bytes) {
    DeviceFootprint* f = On(option);
    if (f == nullptr) return;
    ModelOf(f).Allocate(bytes);
    int64_t* counts[] = {&f->parameters, &f->gradients, &f->momentum, &f->other};
    *counts[static_cast<int>(kind)] += bytes;
  }
  std::vector<DeviceFootprint> Finish() {
    for (size_t i = 0; i < footprints_.size(); ++i) {
      footprints_[i].reserved = models_[i].reserved_bytes();
      footprints_[i].cached = models_[i].cached_bytes();
      footprints_[i].rounding = models_[i].reserved_bytes() - models_[i].requested_bytes() -
                                models_[i].cached_bytes();
      footprints_[i].small_segments = models_[i].small_segments();
    }
    return footprints_;
  }

 private:
  int64_t workspace_cap_;
  std::vector<Device> devices_;
  std::vector<DeviceFootprint> footprints_;
  std::vector<CachingAllocatorModel> models_;
};

Kind InitKind(const TrainingNets& nets, const std::set<std::string>& momenta,
              const std::string& blob) {
  if (momenta.count(blob)) return Kind::kMomentum;
  for (int d = 0; d < nets.num_devices(); ++d) {
    const std::string& prefix = nets.num_devices() > 1 ? nets.device_prefixes[d] : "";
    if (blob.rfind(prefix, 0) == 0 && nets.params.Find(blob.substr(prefix.size())) != nullptr)
      return Kind::kParameter;
  }
  return Kind::kOther;
}

// Step 1 of the header: the init net's outputs. Returns every blob it writes.
std::set<std::string> KeepInitOutputs(const TrainingNets& nets,
                                      const std::map<std::string, ShapeInfo>& shapes,
                                      Ledger* ledger) {
  std::set<std::string> momenta;
  for (int d = 0; d < nets.num_devices(); ++d) {
    for (const std::string& m : nets.optimizer_blobs) momenta.insert(nets.OnDevice(d, m));
  }
  const NetDef& init = nets.params.init_net;
  std::set<std::string> written;
  for (int k = 0; k < init.op_size(); ++k) {
    for (const std::string& out : init.op(k).output()) {
      if (!written.insert(out).second) continue;
      const ShapeInfo& shape = shapes.at(out);
      if (!shape.known) {
        if (DeviceFootprint* f = ledger->On(OpDevice(init, k))) ++f->unsized_blobs;
        continue;
      }
      ledger->Keep(OpDevice(init, k), InitKind(nets, momenta, out),
                   static_cast<int64_t>(shape.nbytes()));
    }
  }
  return written;
}

// Step 2: each device's arena, grown to the test net's where it needs more.
void KeepArenas(const MemoryPlan& train, const MemoryPlan* test, Ledger* ledger) {
  std::vector<std::pair<DeviceOption, int64_t>> arenas;
  for (const ArenaPlan& a : train.arenas) arenas.emplace_back(a.device, a.arena_bytes);
  if (test != nullptr) {
    for (const ArenaPlan& a : test->arenas) {
      auto same = std::find_if(arenas.begin(), arenas.end(), [&](const auto& e) {
        return DeviceFromProto(e.first) == DeviceFromProto(a.device);
      });
      if (same == arenas.end()) arenas.emplace_back(a.device, -a.arena_bytes);  // test's own
    }
  }
  for (const auto& [device, signed_bytes] : arenas) {
    DeviceFootprint* f = ledger->On(device);
    if (f == nullptr) continue;
    const int64_t bytes = std::abs(signed_bytes);
    int64_t needed = bytes;
    if (test != nullptr && signed_bytes >= 0) {
      for (const ArenaPlan& a : test->arenas) {
        if (DeviceFromProto(a.device) == DeviceFromProto(device))
          needed = std::max(needed, a.arena_bytes);
      }
    }
    ledger->ModelOf(f).Allocate(std::max<int64_t>(bytes, 1));
    f->arena = bytes;
    if (needed > bytes) {  // MemoryPlanOptions::share_arenas_of: freed into the cache, regrown
      // A small old arena goes back to a small segment the model does not track: counted in use.
      if (bytes > static_cast<int64_t>(CachingAllocator::kSmallRequest))
        ledger->ModelOf(f).FreeLarge(bytes);
      ledger->ModelOf(f).Allocate(needed);
      f->arena = needed;
      f->test_growth = needed - bytes;
    }
  }
}

// Steps 3 and 4: a net's outputs outside its arenas, not yet allocated, in op order.
void KeepOwnOutputs(const NetDef& net, const PlanRequest& request, const MemoryPlan& plan,
                    std::set<std::string>* allocated, Ledger* ledger) {
  std::set<std::string> recycled;
  for (const ArenaPlan& a : plan.arenas) {
    for (const BlobOffset& b : a.blobs) recycled.insert(b.blob);
  }
  for (int k = 0; k < net.op_size(); ++k) {
    for (const std::string& out : net.op(k).output()) {
      if (recycled.count(out) || !allocated->insert(out).second) continue;
      const DeviceOption device = BlobDevice(net, request, out, k);
      auto bytes = request.blob_bytes.find(out);
      if (bytes == request.blob_bytes.end()) {
        if (DeviceFootprint* f = ledger->On(device)) ++f->unsized_blobs;
        continue;
      }
      const bool gradient = request.gradients.count(out) > 0;
      ledger->Keep(device, gradient ? Kind::kGradient : Kind::kOther, bytes->second);
    }
  }
}

}  // namespace

MemoryPlanOptions TrainNetPlanOptions(const TrainingNets& nets) {
  MemoryPlanOptions train;
  train.mode = PlanMode::kTraining;
  train.share_activations = true;
  train.share_parameter_gradients = true;  // nothing reads them after a step
  for (int d = 0; d < nets.num_devices(); ++d) {  // read after each step
    for (const std::string& blob : {nets.loss, nets.accuracy, nets.lr, nets.iter}) {
      train.keep.insert(nets.OnDevice(d, blob));
    }
  }
  for (const OperatorDef& op : nets.test.op())
    train.keep.insert(op.input().begin(), op.input().end());
  return train;
}

MemoryPlanOptions TestNetPlanOptions(const TrainingNets& nets) {
  MemoryPlanOptions test;
  test.keep = {nets.OnDevice(0, nets.test_loss), nets.OnDevice(0, nets.test_accuracy)};
  return test;
}

int64_t LargestTrainArenaBytes(const TrainingNets& nets) {
  const std::map<std::string, ShapeInfo> shapes = InferBlobShapes(nets.params.init_net, {});
  const MemoryPlan plan =
      PlanMemory(nets.train, PlanRequestFor(nets.train, shapes, TrainNetPlanOptions(nets)));
  int64_t largest = 0;
  for (const ArenaPlan& arena : plan.arenas) largest = std::max(largest, arena.arena_bytes);
  return largest;
}

TrainingNets BuildTrainingNetsWithinArena(const TrainingNetsSpec& spec, int64_t arena_budget_bytes,
                                          const std::function<void(TrainingNets*)>& finish,
                                          RecomputeBudgetReport* report) {
  struct Built {
    TrainingNets nets;
    int64_t arena = 0;
  };
  const auto build = [&](const std::set<std::string>& convs, bool plan) {
    TrainingNetsSpec with = spec;
    with.recompute_convs.insert(convs.begin(), convs.end());
    Built b{BuildTrainingNets(with)};
    if (finish) finish(&b.nets);
    if (plan) b.arena = LargestTrainArenaBytes(b.nets);
    return b;
  };
  RecomputeBudgetReport r;
  r.budget_bytes = std::max<int64_t>(arena_budget_bytes, 0);
  Built best = build({}, r.budget_bytes > 0);
  const std::vector<std::string> candidates = best.nets.recomputable_convs;
  r.candidates = static_cast<int>(candidates.size());
  r.arena_without_bytes = best.arena;
  if (r.budget_bytes > 0 && best.arena > r.budget_bytes) {
    // Cheapest first, each kept where the arena does not grow with it (recomputations chain, so
    // one may pay off only with the next), until within the budget; then each kept one dropped
    // again, most expensive first, where the arena stays within what was reached without it.
    std::set<std::string> chosen;
    for (const std::string& conv : candidates) {
      if (best.arena <= r.budget_bytes) break;
      std::set<std::string> with = chosen;
      with.insert(conv);
      Built tried = build(with, true);
      if (tried.arena <= best.arena) {
        chosen = std::move(with);
        best = std::move(tried);
      }
    }
    const int64_t reached = std::max(best.arena, r.budget_bytes);
    for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
      if (chosen.count(*it) == 0) continue;
      std::set<std::string> without = chosen;
      without.erase(*it);
      Built tried = build(without, true);
      if (tried.arena <= reached) {
        chosen = std::move(without);
        best = std::move(tried);
      }
    }
    r.met = best.arena <= r.budget_bytes;
  }
  r.arena_bytes = best.arena;
  r.convs = best.nets.recomputed.convs;
  if (report != nullptr) *report = r;
  return std::move(best.nets);
}

TrainingNets BuildFootprintNets(const FootprintModel& m, RecomputeBudgetReport* report) {
  const SyntheticImages train =
      ResNetImages(m.model, m.batch, {m.channels, m.image_size, m.classes});
  SyntheticImages test = train;
  if (m.test_batch > 0) test.batch = m.test_batch;
  TrainingNetsSpec nets_spec = ResNetNetsSpec(m.model, train);
  nets_spec.train_input = SyntheticImageReader(train, "train_reader");
  nets_spec.test_input = SyntheticImageReader(test, "test_reader");
  nets_spec.device = m.device;
  nets_spec.recompute_bn_relu = true;  // braid_train with --memory-plan on
  TrainingNets nets = BuildTrainingNetsWithinArena(
      nets_spec, m.recompute_budget,
      [&m](TrainingNets* n) {
        n->train.set_type(m.executor);
        n->test.set_type(m.executor);
      },
      report);
  return nets;
}

std::vector<DeviceFootprint> PredictTrainingFootprint(const TrainingNets& nets,
                                                      const FootprintOptions& options) {
  Ledger ledger(options.workspace_cap);
  const std::map<std::string, ShapeInfo> shapes = InferBlobShapes(nets.params.init_net, {});
  std::set<std::string> allocated = KeepInitOutputs(nets, shapes, &ledger);
  const PlanRequest train_request = PlanRequestFor(nets.train, shapes, TrainNetPlanOptions(nets));
  const MemoryPlan train_plan = PlanMemory(nets.train, train_request);
  PlanRequest test_request;
  MemoryPlan test_plan;
  if (options.test_net) {
    test_request = PlanRequestFor(nets.test, shapes, TestNetPlanOptions(nets));
    test_plan = PlanMemory(nets.test, test_request);
  }
  KeepArenas(train_plan, options.test_net ? &test_plan : nullptr, &ledger);
  KeepOwnOutputs(nets.train, train_request, train_plan, &allocated, &ledger);
  if (options.test_net) KeepOwnOutputs(nets.test, test_request, test_plan, &allocated, &ledger);
  return ledger.Finish();
}

}  // namespace braid
