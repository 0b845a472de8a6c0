#include "planner/memory_plan.h"

#include "planner/blob_lifetimes.h"
#include "planner/lower_bound.h"
#include "planner/packing_problem.h"

namespace braid {
namespace {

int64_t Total(const MemoryPlan& plan, int64_t ArenaPlan::*field) {
  int64_t total = 0;
  for (const ArenaPlan& arena : plan.arenas) total += arena.*field;
  return total;
}

ArenaPlan PlanArena(const BlobLifetimes& lifetimes, const std::vector<int>& blobs) {
  PackingProblem problem = PackingProblemFor(lifetimes, blobs);
  const int64_t bound = MaxWeightAntichain(problem);
  std::vector<int64_t> offsets = PackGreedy(problem, bound);
  ArenaPlan arena;
  for (size_t i = 0; i < blobs.size(); ++i) {
    const BlobLifetime& blob = lifetimes.blobs()[blobs[i]];
    arena.blobs.push_back({blob.name, offsets[i], blob.bytes});
    arena.naive_bytes += blob.bytes;
  }
  arena.arena_bytes = ArenaSize(problem, offsets);
  arena.lower_bound_bytes = bound;
  return arena;
}

}  // namespace

int64_t MemoryPlan::arena_bytes() const { return Total(*this, &ArenaPlan::arena_bytes); }
int64_t MemoryPlan::naive_bytes() const { return Total(*this, &ArenaPlan::naive_bytes); }
int64_t MemoryPlan::lower_bound_bytes() const {
  return Total(*this, &ArenaPlan::lower_bound_bytes);
}

DeviceOption OpDevice(const NetDef& net, int op) {
  return net.op(op).has_device_option() ? net.op(op).device_option() : net.device_option();
}

DeviceOption BlobDevice(const NetDef& net, const PlanRequest& request, const std::string& blob,
                        int first_writer) {
  auto it = request.blob_devices.find(blob);
  return it != request.blob_devices.end() ? it->second : OpDevice(net, first_writer);
}

MemoryPlan PlanMemory(const NetDef& net, const PlanRequest& request) {
  BlobLifetimes lifetimes(net, request);
  const std::vector<std::vector<int>> by_device = lifetimes.BlobsByDevice();
  MemoryPlan plan;
  for (size_t d = 0; d < by_device.size(); ++d) {
    plan.arenas.push_back(PlanArena(lifetimes, by_device[d]));
    plan.arenas.back().device = lifetimes.devices()[d];
  }
  return plan;
}

}  // namespace braid
