// PlanMemory: which blobs of a net may share storage, and where each lives in a per-device arena.
//
// The guarantee: two recycled blobs overlap in memory only if, in the dataflow DAG of
// planner/dataflow.h (the executors' own dependency function), every op that touches one happens
// before every op that writes the other, so under every schedule the `dag` executor may choose one
// is dead before the other is born. The one exception is in place: an op may write output o into
// the memory of input i (same offset, same size) when its schema allows the pair and every other
// op touching the input happens before it and every other op touching the output after it. The
// planner never adds an ordering: it only uses orderings the DAG already has. With
// PlanExecutor::kSimple the listed op order is the schedule, and lifetimes are intervals in it.
//
// Which blobs are recycled: blobs with a size in `blob_bytes`, not external inputs or outputs, not
// in `keep`, and whose first access in the net is a write (a control input counts as a read: it
// keeps the blob alive until its op has run, though the op never reads the data) (a blob
// read before it is written carries state between runs: parameters, momenta, iteration counters).
// In training mode only the request's gradients are recycled, and activations too when
// share_activations is set. The gradient of a blob read before written (a parameter's, an input's)
// is recycled only when share_parameter_gradients is set (it then holds other blobs' bytes after a
// Run, like every recycled blob, so a caller that reads it keeps it). Which blobs are gradients,
// and of what, is data the caller gives (PlanRequest::gradients): the planner knows no naming.
// Each device (device_type, device_id) of the ops that first write recycled blobs gets one arena
// (PlanRequest::blob_devices says otherwise for some).
//
//   PlanRequest request;                     // runtime/exec/memory_planning.h's PlanRequestFor fills
//   request.blob_bytes = {{"fc1", 4096}};    // it from op schemas; here it is plain data
//   request.inplace = {{}, {{0, 0}}};        // op 1 may write output 0 over input 0
//   MemoryPlan plan = PlanMemory(net, request);  // plan.arenas[0].arena_bytes, ...
//
// Offsets come from greedy best-fit packing (planner/packing_problem.h); the bound from
// planner/lower_bound.h. Sizes are rounded up to `alignment` before packing; naive, planned and
// bound bytes all use the rounded sizes. Pure function of its arguments; thread-safe.
#ifndef BRAID_PLANNER_MEMORY_PLAN_H_
#define BRAID_PLANNER_MEMORY_PLAN_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "proto/braid.pb.h"

namespace braid {

enum class PlanMode { kInference, kTraining };
enum class PlanExecutor { kDag, kSimple };

struct PlanRequest {
  // Bytes of each blob (its largest size over a run). Blobs without an entry are not recycled.
  std::map<std::string, int64_t> blob_bytes;
  // inplace[k]: (input index, output index) pairs op k's schema allows to share memory. Missing or
  // empty: none.
  std::vector<std::vector<std::pair<int, int>>> inplace;
  // Blobs never recycled besides the net's external inputs and outputs.
  std::set<std::string> keep;
  PlanMode mode = PlanMode::kInference;
  bool share_activations = false;  // training mode: recycle activations as well as gradients
  // recycle the gradients of blobs read before written (parameters) too
  bool share_parameter_gradients = false;
  // The net's gradient blobs, each with the blob it is the gradient of ("" for a partial gradient
  // that is summed into another). runtime/exec/memory_planning.h's PlanRequestFor fills it from
  // autodiff's names (runtime/core/autodiff.h GradientNameOf).
  std::map<std::string, std::string> gradients;
  PlanExecutor executor = PlanExecutor::kDag;
  int64_t alignment = 64;
  // Where a blob lives when not on the device of the first op writing it (an op on a device that
  // writes host memory: a copy). See BlobDevice.
  std::map<std::string, DeviceOption> blob_devices;
};

struct BlobOffset {
  std::string blob;
  int64_t offset = 0;  // bytes from the arena's start; a multiple of the alignment
  int64_t bytes = 0;   // rounded up to the alignment
};

// One device's arena. Blobs live on the device of the first op that writes them.
struct ArenaPlan {
  DeviceOption device;
  std::vector<BlobOffset> blobs;  // the recycled blobs, in order of first write
  int64_t arena_bytes = 0;        // planned: the arena's size
  int64_t naive_bytes = 0;        // every recycled blob in its own storage
  int64_t lower_bound_bytes = 0;  // no valid plan of these blobs can be smaller
};

struct MemoryPlan {
  std::vector<ArenaPlan> arenas;  // one per device that has recycled blobs
  int64_t arena_bytes() const;
  int64_t naive_bytes() const;
  int64_t lower_bound_bytes() const;
};

MemoryPlan PlanMemory(const NetDef& net, const PlanRequest& request);

// Device option an op runs with: its own if set, else the net's.
DeviceOption OpDevice(const NetDef& net, int op);
// The device whose arena holds `blob`, first written by op `first_writer`: its entry in
// request.blob_devices, else that op's device.
DeviceOption BlobDevice(const NetDef& net, const PlanRequest& request, const std::string& blob,
                        int first_writer);

}  // namespace braid

#endif  // BRAID_PLANNER_MEMORY_PLAN_H_
