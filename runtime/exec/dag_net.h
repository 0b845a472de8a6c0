// DagNet: runs independent ops in parallel on a oneTBB flow graph ("dag").
//
// Dependencies come from planner/dataflow.h (the function the memory planner uses too).
// Straight-line chains (op i's only child is j and j's only parent is i) are fused into one
// flow-graph node, so a chain costs one task, not one per op. The graph is built once, in a
// task_arena of num_workers threads (runtime/exec/net.h NumWorkers; above the core count too,
// runtime/exec/tbb_threads.h), and reused by every Run.
//
// First iteration: with the net argument first_iter_only_one_worker = 1, every Run until one
// whose ops all succeed (a failed first Run may have left allocations lazy) executes the ops one
// at a time on the calling thread in listed (topological) order; later Runs are parallel. It
// defaults to 1 when the net has a collective op or an op whose schema says it allocates lazily
// (lazy allocations in a parallel first run can deadlock collectives), else 0
// (runtime/exec/net_args.h FirstRunIsSingleThreaded).
//
// Intra-op threads: each op's OpenMP team follows the ops that may run beside it
// (runtime/exec/intra_op_threads.h, through Net::PlanExecution), so parallel ops do not
// oversubscribe the cores and an op that runs alone uses them all.
//
// The listed-order policy (RunsBetterInListedOrder): when under a quarter of the ops may run
// beside another (OpsAtOnce > 1), hardly anything can run side by side and the flow graph would
// only cost (an idle worker spins, two OpenMP pools throttle each other; README's executor
// benchmarks measure it): such a net runs in listed order on the calling thread with full teams,
// as the simple executor runs it (runs_in_listed_order()). A data-parallel net, whose replicas'
// paths run side by side, keeps the flow graph.
//
// Scratch: a chain runs with the scratch area (runtime/exec/scratch.h) of its thread's arena slot.
//
// Devices: a chain's ops on a device are launched on one of num_workers streams of their device
// (at most kMaxDeviceStreams, runtime/core/device_context.h; runtime/exec/launch_plan.h), chosen
// when the net is built, so every run uses the same: a chain goes on with the stream of its first
// parent chain that has not passed it on yet (sequential work stays on one stream, without event
// waits), other chains take the streams in turn.
//
// Errors: the first op (or kernel) to fail records its Status (Net::RecordError); ops not yet
// started are skipped, and Run returns that Status once the graph and the streams drain. The next
// Run starts clean.
//
// Thread safety: see runtime/exec/net.h.
#ifndef BRAID_RUNTIME_EXEC_DAG_NET_H_
#define BRAID_RUNTIME_EXEC_DAG_NET_H_

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/task_arena.h>

#include <memory>
#include <vector>

#include "runtime/exec/net.h"

namespace braid {

// The listed-order policy above: `beside_another` of the net's `num_ops` ops may run beside
// another under the flow graph.
inline bool RunsBetterInListedOrder(int beside_another, int num_ops) {
  return beside_another * 4 < num_ops;
}

class DagNet final : public Net {
 public:
  DagNet(const NetDef& def, Workspace* ws);
  ~DagNet() override;

  int num_chains() const { return static_cast<int>(chains_.size()); }
  bool first_iter_only_one_worker() const { return first_iter_only_one_worker_; }
  bool runs_in_listed_order() const { return listed_order_; }

 private:
  using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;

  // One flow-graph node's work, a slice of slots_: its chain's ops at [begin, first_child),
  // then the first op of each child chain at [first_child, end). RunChain prefetches the children's
  // op objects: with cheap ops, scheduling is bound by cache misses on them, not by instructions.
  struct ChainSlice {
    int begin;
    int first_child;
    int end;
  };

  void RunOps(bool first_run) override;
  void LayOutChains(const std::vector<std::vector<int>>& chains,
                    const std::vector<std::vector<int>>& chain_children);
  void BuildGraph(const std::vector<std::vector<int>>& chain_children);
  void RunChain(ChainSlice slice);

  bool first_iter_only_one_worker_;
  bool listed_order_ = false;  // see the file comment
  std::vector<ChainSlice> chains_;
  std::vector<OperatorBase*> slots_;  // every chain's slice, chain after chain
  std::vector<int> root_chains_;
  tbb::task_arena arena_;
  std::unique_ptr<tbb::flow::graph> graph_;  // created inside arena_
  std::vector<std::unique_ptr<Node>> nodes_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_DAG_NET_H_
