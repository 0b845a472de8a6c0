// Human-readable summaries of a memory plan (planner/memory_plan.h) for braid's tools.
//
//   std::cout << PlanSummaryLine(plan) << "\n";
//   // memory plan: naive 24.00 MiB, planned 6.00 MiB, lower bound 6.00 MiB, planned/bound 1.000,
//   //   12 blobs recycled in 1 arena
//
// Pure functions; thread-safe.
#ifndef BRAID_TOOLS_PLAN_SUMMARY_H_
#define BRAID_TOOLS_PLAN_SUMMARY_H_

#include <cstdint>
#include <string>

#include "planner/memory_plan.h"
#include "proto/braid.pb.h"
#include "runtime/core/allocator.h"  // HumanBytes

namespace braid {

// planned / lower bound; 1 when both are 0 (nothing recycled).
double PlannedOverBound(const MemoryPlan& plan);
// Recycled blobs over every arena.
int RecycledBlobCount(const MemoryPlan& plan);
// Distinct blob names `net` reads, writes or names as a control input, plus its external inputs
// and outputs.
int DistinctBlobCount(const NetDef& net);
// One line: naive, planned and lower-bound bytes, planned/bound, recycled blobs and arenas.
std::string PlanSummaryLine(const MemoryPlan& plan);

}  // namespace braid

#endif  // BRAID_TOOLS_PLAN_SUMMARY_H_
