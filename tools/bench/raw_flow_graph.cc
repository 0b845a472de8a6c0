#include "tools/bench/raw_flow_graph.h"

namespace braid::bench {

RawFlowGraph::RawFlowGraph(const DataflowGraph& dataflow, int workers) : arena_(workers) {
  arena_.execute([&] { Build(dataflow); });
}

RawFlowGraph::~RawFlowGraph() {
  arena_.execute([this] {
    nodes_.clear();
    graph_.reset();
  });
}

void RawFlowGraph::Build(const DataflowGraph& dataflow) {
  graph_ = std::make_unique<tbb::flow::graph>();
  nodes_.reserve(dataflow.num_ops());
  for (int i = 0; i < dataflow.num_ops(); ++i) {
    nodes_.push_back(std::make_unique<Node>(
        *graph_, [](const tbb::flow::continue_msg&) { return tbb::flow::continue_msg(); }));
    if (dataflow.parents[i].empty()) roots_.push_back(nodes_.back().get());
  }
  for (int i = 0; i < dataflow.num_ops(); ++i) {
    for (int child : dataflow.children[i]) tbb::flow::make_edge(*nodes_[i], *nodes_[child]);
  }
}

void RawFlowGraph::Run() {
  arena_.execute([this] {
    for (Node* root : roots_) root->try_put(tbb::flow::continue_msg());
    graph_->wait_for_all();
  });
}

}  // namespace braid::bench
