#include "runtime/dag_net.h"

#include "planner/dataflow.h"
#include "runtime/argument.h"
#include "runtime/op_schema.h"

namespace braid {
namespace {

bool NeedsSingleThreadedFirstRun(const NetDef& def) {
  for (const OperatorDef& op : def.op()) {
    const OpSchema* schema = FindSchema(op.type());
    if (schema != nullptr && (schema->is_collective() || schema->allocates_lazily())) return true;
  }
  return false;
}

// Splits the DAG into maximal chains: j joins i's chain when j is i's only child and i is j's
// only parent.
std::vector<std::vector<int>> FuseChains(const DataflowGraph& g, std::vector<int>* chain_of) {
  std::vector<std::vector<int>> chains;
  chain_of->assign(g.num_ops(), -1);
  for (int i = 0; i < g.num_ops(); ++i) {
    if ((*chain_of)[i] >= 0) continue;
    chains.emplace_back();
    for (int op = i;;) {
      (*chain_of)[op] = static_cast<int>(chains.size()) - 1;
      chains.back().push_back(op);
      if (g.children[op].size() != 1) break;
      int next = g.children[op][0];
      if (g.parents[next].size() != 1) break;
      op = next;
    }
  }
  return chains;
}

}  // namespace

DagNet::DagNet(const NetDef& def, Workspace* ws)
    : Net(def, ws, NumWorkers(def)),
      first_iter_only_one_worker_(ArgumentReader(def.arg()).Get<bool>(
          "first_iter_only_one_worker", NeedsSingleThreadedFirstRun(def))),
      arena_(NumWorkers(def)),
      intra_op_threads_(&arena_, IntraOpThreadsFor(def, NumWorkers(def))) {
  DataflowGraph g = BuildDataflow(def);
  std::vector<int> chain_of;
  std::vector<std::vector<int>> chains = FuseChains(g, &chain_of);
  std::vector<std::vector<int>> chain_children(chains.size());
  for (size_t c = 0; c < chains.size(); ++c) {
    for (int child : g.children[chains[c].back()]) chain_children[c].push_back(chain_of[child]);
    if (g.parents[chains[c].front()].empty()) root_chains_.push_back(static_cast<int>(c));
  }
  LayOutChains(chains, chain_children);
  std::vector<int> stream_of(g.num_ops());
  for (int i = 0; i < g.num_ops(); ++i) stream_of[i] = chain_of[i] % NumWorkers(def);
  PlanLaunches(g, stream_of);
  // Built while the temporaries above are alive, so the flow graph's small allocations do not
  // scatter into the holes they would leave (measured: scattered nodes cost cache misses per Run).
  arena_.execute([&] { BuildGraph(chain_children); });
}

DagNet::~DagNet() {
  arena_.execute([this] {
    nodes_.clear();
    graph_.reset();
  });
}

void DagNet::LayOutChains(const std::vector<std::vector<int>>& chains,
                          const std::vector<std::vector<int>>& chain_children) {
  chains_.reserve(chains.size());
  for (size_t c = 0; c < chains.size(); ++c) {
    ChainSlice slice;
    slice.begin = static_cast<int>(slots_.size());
    for (int i : chains[c]) slots_.push_back(&op(i));
    slice.first_child = static_cast<int>(slots_.size());
    for (int child : chain_children[c]) slots_.push_back(&op(chains[child].front()));
    slice.end = static_cast<int>(slots_.size());
    chains_.push_back(slice);
  }
}

void DagNet::BuildGraph(const std::vector<std::vector<int>>& chain_children) {
  graph_ = std::make_unique<tbb::flow::graph>();
  nodes_.reserve(chains_.size());
  for (const ChainSlice& slice : chains_) {
    nodes_.push_back(std::make_unique<Node>(*graph_, [this, slice](const tbb::flow::continue_msg&) {
      RunChain(slice);
      return tbb::flow::continue_msg();
    }));
  }
  for (size_t c = 0; c < chains_.size(); ++c) {
    for (int child : chain_children[c]) tbb::flow::make_edge(*nodes_[c], *nodes_[child]);
  }
}

void DagNet::RunChain(ChainSlice slice) {
  ScratchScope scratch(&scratch_area(tbb::this_task_arena::current_thread_index()));
  OperatorBase* const* slots = slots_.data();
  for (int k = slice.begin + 1; k < slice.end; ++k) __builtin_prefetch(slots[k]);
  for (int k = slice.begin; k < slice.first_child; ++k) {
    if (failed()) return;
    Status s = RunOrLaunch(*slots[k]);
    if (!s.ok()) {
      RecordError(std::move(s));
      return;
    }
  }
}

void DagNet::RunOps(bool first_run) {
  if (first_run && first_iter_only_one_worker_) {
    // In the arena, so that kernels set up on the first run (oneDNN fixes its thread count when a
    // primitive is created) see the same OpenMP budget as later runs.
    arena_.execute([&] {
      ScratchScope scratch(&scratch_area(tbb::this_task_arena::current_thread_index()));
      RunInListedOrder();
    });
    return;
  }
  arena_.execute([this] {
    for (int root : root_chains_) nodes_[root]->try_put(tbb::flow::continue_msg());
    graph_->wait_for_all();
  });
}

}  // namespace braid
