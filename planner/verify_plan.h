// Independent proofs that a memory plan, or a renamed net, is safe.
//
// These checkers share no code with the assignment side (lifetimes, packing, greedy or exact
// solvers): they re-derive happens-before from BuildDataflow (planner/dataflow.h, the executors'
// own dependency function) by their own search, and test the guarantee of planner/memory_plan.h
// pair by pair. Both return an empty string when the plan or net is safe, else one message naming
// the net, the blobs, their offsets and the ops involved.
//
//   MemoryPlan plan = PlanMemory(net, request);
//   std::string error = VerifyMemoryPlan(net, request, plan);
//   if (!error.empty()) throw Error(error);
//
// Pure functions; thread-safe.
#ifndef BRAID_PLANNER_VERIFY_PLAN_H_
#define BRAID_PLANNER_VERIFY_PLAN_H_

#include <string>

#include "planner/memory_plan.h"
#include "proto/braid.pb.h"

namespace braid {

// Proves, for every pair of placed blobs sharing bytes in one arena, that one is dead before the
// other is born on every schedule of request.executor (reachability in BuildDataflow for kDag,
// listed order for kSimple), or that the two form a legal in-place pair at one offset. Also checks
// that each placed blob is recyclable (memory_plan.h's rules), placed once, aligned, inside its
// arena, big enough for its size, and in the arena of the device of the first op writing it.
std::string VerifyMemoryPlan(const NetDef& net, const PlanRequest& request, const MemoryPlan& plan);

// Proves that `renamed` (a Caffe2 memonger-style net whose recycled blobs share names) computes
// what `original` does: the same ops in the same order (type, engine, arguments, device, arity,
// control-input count); every input and control input reads the same producer (the last earlier op
// writing its name, or the same external blob); external inputs and outputs unchanged, each
// external output last written by the same op; blobs that carry state (external, or read before
// written) written by the same op outputs; and the happens-before relation of BuildDataflow's DAG
// identical, so the renaming neither removes nor adds an ordering.
std::string VerifyRenamedNet(const NetDef& original, const NetDef& renamed);

}  // namespace braid

#endif  // BRAID_PLANNER_VERIFY_PLAN_H_
