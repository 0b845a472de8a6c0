// ReorderForMemory: a listed order of a net's ops that needs less memory on the simple executor.
//
// The simple executor runs ops in listed order, so the order sets every blob's lifetime. Any
// topological order of the dataflow DAG (planner/dataflow.h) computes the same values, because the
// DAG orders every writer of a blob against its readers and other writers. This pass schedules the
// DAG greedily: of the ops whose parents have run, it takes the one that adds the fewest live bytes
// (bytes of the recyclable blobs it creates minus those it frees; the earliest listed on ties),
// then keeps the result only if the simple executor's planned arena shrinks; otherwise the net
// comes back unchanged. The dag executor ignores listed order, so this matters only for `simple`.
//
//   NetDef reordered = ReorderForMemory(net, request);   // request.executor is ignored
//
// Pure function; thread-safe.
#ifndef BRAID_PLANNER_REORDER_H_
#define BRAID_PLANNER_REORDER_H_

#include "planner/memory_plan.h"
#include "proto/braid.pb.h"

namespace braid {

NetDef ReorderForMemory(const NetDef& net, const PlanRequest& request);

}  // namespace braid

#endif  // BRAID_PLANNER_REORDER_H_
