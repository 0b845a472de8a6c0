#include "runtime/exec/dag_net.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "planner/dataflow.h"
#include "runtime/core/argument.h"
#include "runtime/core/device_context.h"
#include "runtime/core/op_schema.h"
#include "runtime/exec/net_args.h"
#include "runtime/exec/tbb_threads.h"

namespace braid {
namespace {

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

// The stream of each chain (on each of its ops' devices): a chain goes on with the stream of its
// latest parent chain (the one it most likely starts after) unless that parent passed its stream to
// an earlier child, so sequential work stays on one stream without event waits; a chain with none
// takes the next of `workers` streams (at most kMaxDeviceStreams) in turn. Chains are numbered in
// the order of their first ops, so parents come first.
std::vector<int> ChainStreams(const std::vector<std::vector<int>>& chains, const DataflowGraph& g,
                              const std::vector<int>& chain_of, int workers) {
  std::vector<int> stream(chains.size());
  std::vector<char> passed_on(chains.size(), 0);
  int next = 0;
  for (size_t c = 0; c < chains.size(); ++c) {
    const std::vector<int>& parents = g.parents[chains[c].front()];
    const int from =
        !parents.empty() && !passed_on[chain_of[parents.back()]] ? chain_of[parents.back()] : -1;
    if (from >= 0) {
      passed_on[from] = 1;
      stream[c] = stream[from];
    } else {
      stream[c] = next++ % std::min(workers, kMaxDeviceStreams);
    }
  }
  return stream;
}

// Launch order: each device stream is given work in the order of the chains' first ops (the
// listed order), as the simple executor gives it, not in whatever order the workers reach the
// chains: otherwise a chain waiting for a late event (an update after its all-reduce) can be queued
// ahead of work that is ready, and the stream's order holds that work back. An edge from each
// chain with ops on a stream to the next such chain; a chain listed later is never an ancestor of
// one listed earlier (only a chain's first op has several parents), so the edges make no cycle.
// They order launches only: the event waits stay the dataflow edges.
void AddLaunchOrder(const std::vector<std::vector<int>>& chains, const std::vector<int>& stream_of,
                    const NetDef& def, std::vector<std::vector<int>>* chain_children) {
  std::map<std::tuple<int, int, int>, int> last_on;  // (device type, id, stream) -> chain
  for (size_t c = 0; c < chains.size(); ++c) {
    for (int i : chains[c]) {
      const Device device = DeviceFromProto(def.op(i).device_option());
      if (device.is_host()) continue;
      const auto key = std::make_tuple(static_cast<int>(device.type), device.id, stream_of[i]);
      auto [it, first] = last_on.try_emplace(key, static_cast<int>(c));
      if (first || it->second == static_cast<int>(c)) continue;
      std::vector<int>& children = (*chain_children)[it->second];
      if (std::find(children.begin(), children.end(), c) == children.end()) children.push_back(c);
      it->second = static_cast<int>(c);
    }
  }
}

}  // namespace

DagNet::DagNet(const NetDef& def, Workspace* ws)
    : Net(def, ws, NumWorkers(def)),
      first_iter_only_one_worker_(FirstRunIsSingleThreaded(def)),
      arena_(AllowTbbThreads(NumWorkers(def))) {
  DataflowGraph g = BuildDataflow(def);
  std::vector<int> chain_of;
  std::vector<std::vector<int>> chains = FuseChains(g, &chain_of);
  std::vector<std::vector<int>> chain_children(chains.size());
  for (size_t c = 0; c < chains.size(); ++c) {
    for (int child : g.children[chains[c].back()]) chain_children[c].push_back(chain_of[child]);
  }
  const std::vector<int> chain_stream = ChainStreams(chains, g, chain_of, NumWorkers(def));
  std::vector<int> stream_of(g.num_ops());
  for (int i = 0; i < g.num_ops(); ++i) stream_of[i] = chain_stream[chain_of[i]];
  AddLaunchOrder(chains, stream_of, def, &chain_children);
  // Planned for the flow graph first: how many ops may run beside another decides the policy.
  const int beside_another = PlanExecution(g, stream_of, NumWorkers(def));
  listed_order_ = RunsBetterInListedOrder(beside_another, g.num_ops());
  if (listed_order_) {
    PlanExecution(g, std::vector<int>(g.num_ops(), 0), /*workers=*/1);  // as SimpleNet plans
  }
  std::vector<char> has_parent(chains.size(), 0);
  for (const std::vector<int>& children : chain_children) {
    for (int child : children) has_parent[child] = 1;
  }
  for (size_t c = 0; c < chains.size(); ++c) {
    if (!has_parent[c]) root_chains_.push_back(static_cast<int>(c));
  }
  LayOutChains(chains, chain_children);
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
  IntraOpThreads();  // a worker may have run other code since its last chain (SetIntraOpThreads)
  OperatorBase* const* slots = slots_.data();
  for (int k = slice.begin + 1; k < slice.end; ++k) __builtin_prefetch(slots[k]);
  for (int k = slice.begin; k < slice.first_child; ++k) {
    if (StopBeforeOp(slots[k]->net_position())) return;
    // A flow-graph node must not throw (oneTBB would cancel the graph with its successors' counts
    // half made): RunOrLaunch does not.
    Status s = RunOrLaunch(*slots[k]);
    if (!s.ok()) {
      RecordError(std::move(s));
      return;
    }
  }
}

void DagNet::RunOps(bool first_run) {
  if (listed_order_) {
    ScratchScope scratch(&scratch_area(0));
    RunInListedOrder();
    return;
  }
  if (first_run && first_iter_only_one_worker_) {
    // In the arena, as later runs, so that its first thread slot's scratch area serves it.
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
