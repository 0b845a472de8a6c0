#include "tools/plan_summary.h"

#include <cstdio>

#include "planner/dataflow.h"

namespace braid {

double PlannedOverBound(const MemoryPlan& plan) {
  const int64_t bound = plan.lower_bound_bytes();
  if (bound == 0) return plan.arena_bytes() == 0 ? 1.0 : 0.0;
  return static_cast<double>(plan.arena_bytes()) / static_cast<double>(bound);
}

int RecycledBlobCount(const MemoryPlan& plan) {
  int count = 0;
  for (const ArenaPlan& arena : plan.arenas) count += static_cast<int>(arena.blobs.size());
  return count;
}

int DistinctBlobCount(const NetDef& net) { return static_cast<int>(BlobNamesIn(net).size()); }

std::string PlanSummaryLine(const MemoryPlan& plan) {
  const size_t arenas = plan.arenas.size();
  char ratio[32];
  std::snprintf(ratio, sizeof(ratio), "%.3f", PlannedOverBound(plan));
  return "memory plan: naive " + HumanBytes(plan.naive_bytes()) + ", planned " +
         HumanBytes(plan.arena_bytes()) + ", lower bound " + HumanBytes(plan.lower_bound_bytes()) +
         ", planned/bound " + ratio + ", " + std::to_string(RecycledBlobCount(plan)) +
         " blobs recycled in " + std::to_string(arenas) + (arenas == 1 ? " arena" : " arenas");
}

}  // namespace braid
