// RawFlowGraph: the benchmark baseline, a bare oneTBB flow graph over a net's dataflow edges.
//
// One continue_node with an empty body per op and one edge per DataflowGraph edge (no chain
// fusion, no ops, no error handling), built and run in a task_arena of `workers` threads, the way
// runtime/exec/dag_net.cc runs its graph. What braid's dag executor costs beyond this is its
// overhead.
//
//   RawFlowGraph raw(BuildDataflow(def), /*workers=*/2);
//   raw.Run();   // every node once, in dependency order
//
// Thread safety: Run is called from one thread at a time. Not copyable.
#ifndef BRAID_TOOLS_BENCH_RAW_FLOW_GRAPH_H_
#define BRAID_TOOLS_BENCH_RAW_FLOW_GRAPH_H_

#include <memory>
#include <vector>

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/task_arena.h>

#include "planner/dataflow.h"

namespace braid::bench {

class RawFlowGraph {
 public:
  RawFlowGraph(const DataflowGraph& dataflow, int workers);
  ~RawFlowGraph();
  RawFlowGraph(const RawFlowGraph&) = delete;
  RawFlowGraph& operator=(const RawFlowGraph&) = delete;

  void Run();
  int num_nodes() const { return static_cast<int>(nodes_.size()); }

 private:
  using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;

  void Build(const DataflowGraph& dataflow);

  tbb::task_arena arena_;
  std::unique_ptr<tbb::flow::graph> graph_;  // created inside arena_
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Node*> roots_;
};

}  // namespace braid::bench

#endif  // BRAID_TOOLS_BENCH_RAW_FLOW_GRAPH_H_
