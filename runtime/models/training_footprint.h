// The device memory a planned training run will hold, predicted before anything runs: what each
// device's caching allocator (runtime/device/caching_allocator.h) reserves for a TrainingLoop with
// memory_plan on (runtime/train/training_loop.h), per device and by kind of blob.
//
// The nets are planned exactly as the TrainingLoop plans them (TrainNetPlanOptions,
// TestNetPlanOptions, which the TrainingLoop itself uses), with blob sizes from shape inference of the
// init net (no workspace, no device touched). Every blob that does not live in an arena is one
// allocation that lasts the run; they are replayed in the order the TrainingLoop makes them through
// CachingAllocatorModel (runtime/device/caching_allocator_model.h), so rounding and the small
// pool's 2 MiB segments are counted as the allocator will count them:
//   1. the init net's outputs (parameters, momenta, the iteration counter), in op order;
//   2. the train net's arena; where the test net needs more, the larger arena (the train net's
//      old one is freed into the cache first: the new one reuses it when it fits, else it stays
//      reserved, `cached`);
//   3. the train net's own unplanned outputs (loss, accuracy, lr, kept gradients), first iteration;
//   4. the test net's own unplanned outputs (its loss and accuracy), first evaluation.
// Host blobs (the readers' outputs) are not on a device and are not counted.
//
// The workspace: convolution algorithms (runtime/device/algorithm_registry.h) get a workspace of at
// most the registry's search limit. On cuda it is device memory, taken per op, so the footprint
// adds the cap (the largest workspace a chosen algorithm needs, FootprintOptions::workspace_cap) to
// the total; on sim oneDNN's scratchpads live in host scratch memory (runtime/exec/scratch.h), so
// the cap is shown but not part of the device's total.
//
//   TrainingNets nets = BuildFootprintNets({.model = "resnet50", .batch = 32, .device = sim0});
//   for (const DeviceFootprint& f : PredictTrainingFootprint(nets, {})) ... f.total_bytes() ...
//
// Throws braid::Error when a net's shapes are inconsistent. Thread safety: pure functions.
#ifndef BRAID_RUNTIME_MODELS_TRAINING_FOOTPRINT_H_
#define BRAID_RUNTIME_MODELS_TRAINING_FOOTPRINT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/exec/memory_planning.h"
#include "runtime/models/training_nets.h"

namespace braid {

// The TrainingLoop's plan of the train net: training mode, activations and parameter gradients
// recycled, the blobs the trainer reads after a step and everything the test net reads kept.
MemoryPlanOptions TrainNetPlanOptions(const TrainingNets& nets);
// The TrainingLoop's plan of the test net (share_arenas_of is left for the caller to set).
MemoryPlanOptions TestNetPlanOptions(const TrainingNets& nets);

// The largest arena of `nets`' train net as the TrainingLoop plans it (TrainNetPlanOptions; the
// executor of nets.train.type()): the plan has one arena per device (and one on the host for a
// sim or cuda device's reader), so this is what the fullest device holds.
int64_t LargestTrainArenaBytes(const TrainingNets& nets);

// Recomputation for a memory budget: the nets of `spec` whose train net also recomputes some of
// its recomputable Convs (TrainingNets::recomputable_convs, cheapest per byte first;
// runtime/models/recompute.h), chosen to bring LargestTrainArenaBytes within `arena_budget_bytes`
// with few of them. `finish`, when set, completes every candidate as the caller will run it before
// it is planned (ReplicateForDevices, the executor), and the returned nets are finished. Greedy,
// by planning: each candidate in order is kept where the arena does not grow with it (a
// recomputed Conv's input may be rebuilt from another recomputed Conv, so one may pay off only with
// the next), until the arena is within the budget; then every kept one is tried without, most
// expensive first, and dropped where the arena stays within the budget (or, when it was not met, at
// what was reached). Not a minimum, but it meets budgets with few Convs (README, "Measurements
// behind the design"). `report->met` says whether the budget was met. A budget of 0 (or less)
// builds the nets as BuildTrainingNets does and plans nothing. Each trial builds and plans the
// nets, so a search costs seconds on a large net, most when no choice reaches the budget. The test
// net, which shares the train net's arena (runtime/train/training_loop.h), may need more.
struct RecomputeBudgetReport {
  int64_t budget_bytes = 0;
  int64_t arena_without_bytes = 0;  // no Conv recomputed (spec's own recomputation only)
  int64_t arena_bytes = 0;          // as built
  int convs = 0, candidates = 0;    // Convs recomputed, of the recomputable ones
  bool met = true;
};
TrainingNets BuildTrainingNetsWithinArena(const TrainingNetsSpec& spec, int64_t arena_budget_bytes,
                                          const std::function<void(TrainingNets*)>& finish,
                                          RecomputeBudgetReport* report);

// A ResNet trained on synthetic images, built as braid_train builds it (recompute and blocked
// layouts on, as with --memory-plan on); image size, channels and classes 0 take braid_model's
// defaults (28, 1, 10 CIFAR-style; 224, 3, 1000 ImageNet-style).
struct FootprintModel {
  std::string model = "resnet20";
  int64_t batch = 64;
  int64_t test_batch = 0;  // 0: the training batch
  int64_t image_size = 0, channels = 0, classes = 0;
  DeviceOption device;
  std::string executor = "simple";
  int64_t recompute_budget = 0;  // BuildTrainingNetsWithinArena's budget (0: none)
};
// `report`, when given, gets the budget's outcome.
TrainingNets BuildFootprintNets(const FootprintModel& model,
                                RecomputeBudgetReport* report = nullptr);

struct FootprintOptions {
  int64_t workspace_cap = 0;  // the largest workspace of the chosen algorithms (see above)
  bool test_net = true;       // the test net shares the train arena and runs between steps
};

// One device's prediction. Byte counts by kind are requested bytes; `rounding` is what the
// allocator adds to them (rounding up, the unused rest of small segments).
struct DeviceFootprint {
  DeviceOption device;
  int64_t parameters = 0;  // trained parameters and state (batch-norm running statistics)
  int64_t gradients = 0;   // parameter gradients not in the arena
  int64_t momentum = 0;
  int64_t other = 0;       // the rest kept on the device: iter, lr, loss, accuracy, ...
  int64_t arena = 0;       // the planned arena both nets use (the larger of theirs)
  int64_t test_growth = 0;  // of which the test net's need beyond the train net's arena
  int64_t cached = 0;       // reserved but free: the train arena's old segment after a growth
  int64_t workspace_cap = 0;
  bool workspace_on_device = false;  // cuda: the cap is device memory (see above)
  int64_t rounding = 0;
  int64_t reserved = 0;    // what the caching allocator holds: all of the above but the workspace
  int64_t small_segments = 0;
  int unsized_blobs = 0;   // outputs shape inference cannot size (not counted; they allocate)

  int64_t total_bytes() const { return reserved + (workspace_on_device ? workspace_cap : 0); }
};

// Per device the nets use other than the host, in order of first use.
std::vector<DeviceFootprint> PredictTrainingFootprint(const TrainingNets& nets,
                                                      const FootprintOptions& options);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_TRAINING_FOOTPRINT_H_
