// DagNet: runs independent ops in parallel on a oneTBB flow graph ("dag").
//
// Dependencies come from planner/dataflow.h (the function the memory planner uses too).
// Straight-line chains (op i's only child is j and j's only parent is i) are fused into one
// flow-graph node, so a chain costs one task, not one per op. The graph is built once, in a
// task_arena of num_workers threads (runtime/net.h NumWorkers), and reused by every Run.
//
// First iteration: with the net argument first_iter_only_one_worker = 1, the first Run executes
// the ops one at a time on the calling thread in listed (topological) order; later Runs are
// parallel. It defaults to 1 when the net has a collective op or an op whose schema says it
// allocates lazily (lazy allocations in a parallel first run can deadlock collectives), else 0.
//
// Intra-op threads: while the net runs, each arena thread's OpenMP budget is hardware threads /
// num_workers (runtime/intra_op_threads.h), so parallel ops do not oversubscribe the cores.
//
// Scratch: a chain runs with the scratch area (runtime/scratch.h) of its thread's arena slot.
//
// Devices: a chain's ops on a device are launched on stream (chain index mod num_workers) of their
// device (runtime/launch_plan.h): one stream per worker, chosen the same way every run.
//
// Errors: the first op (or kernel) to fail records its Status (Net::RecordError); ops not yet
// started are skipped, and Run returns that Status once the graph and the streams drain. The next
// Run starts clean.
//
// Thread safety: see runtime/net.h.
#ifndef BRAID_RUNTIME_DAG_NET_H_
#define BRAID_RUNTIME_DAG_NET_H_

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/task_arena.h>

#include <memory>
#include <vector>

#include "runtime/intra_op_threads.h"
#include "runtime/net.h"

namespace braid {

class DagNet final : public Net {
 public:
  DagNet(const NetDef& def, Workspace* ws);
  ~DagNet() override;

  int num_chains() const { return static_cast<int>(chains_.size()); }
  bool first_iter_only_one_worker() const { return first_iter_only_one_worker_; }

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
  std::vector<ChainSlice> chains_;
  std::vector<OperatorBase*> slots_;  // every chain's slice, chain after chain
  std::vector<int> root_chains_;
  tbb::task_arena arena_;
  IntraOpThreads intra_op_threads_;          // observes arena_
  std::unique_ptr<tbb::flow::graph> graph_;  // created inside arena_
  std::vector<std::unique_ptr<Node>> nodes_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_DAG_NET_H_
