#include "planner/lower_bound.h"

#include <algorithm>
#include <limits>
#include <queue>

namespace braid {
namespace {

constexpr int64_t kInfinite = std::numeric_limits<int64_t>::max() / 4;

// Dinic's maximum flow on an adjacency-list graph with paired residual edges.
class MaxFlow {
 public:
  explicit MaxFlow(int nodes) : head_(nodes, -1), level_(nodes), next_edge_(nodes) {}

  void AddEdge(int from, int to, int64_t capacity) {
    edges_.push_back({to, head_[from], capacity});
    head_[from] = static_cast<int>(edges_.size()) - 1;
    edges_.push_back({from, head_[to], 0});
    head_[to] = static_cast<int>(edges_.size()) - 1;
  }

  int64_t Run(int source, int sink) {
    int64_t flow = 0;
    while (BuildLevels(source, sink)) {
      next_edge_ = head_;
      while (int64_t pushed = Push(source, sink, kInfinite)) flow += pushed;
    }
    return flow;
  }

  // After Run: whether `node` is reachable from the source in the residual graph.
  bool OnSourceSide(int node) const { return level_[node] >= 0; }

 private:
  struct Edge {
    int to, next;
    int64_t capacity;
  };

  bool BuildLevels(int source, int sink) {
    std::fill(level_.begin(), level_.end(), -1);
    std::queue<int> queue;
    level_[source] = 0;
    queue.push(source);
    while (!queue.empty()) {
      const int u = queue.front();
      queue.pop();
      for (int e = head_[u]; e >= 0; e = edges_[e].next) {
        if (edges_[e].capacity > 0 && level_[edges_[e].to] < 0) {
          level_[edges_[e].to] = level_[u] + 1;
          queue.push(edges_[e].to);
        }
      }
    }
    return level_[sink] >= 0;
  }

  int64_t Push(int u, int sink, int64_t limit) {
    if (u == sink) return limit;
    for (int& e = next_edge_[u]; e >= 0; e = edges_[e].next) {
      Edge& edge = edges_[e];
      if (edge.capacity <= 0 || level_[edge.to] != level_[u] + 1) continue;
      if (int64_t pushed = Push(edge.to, sink, std::min(limit, edge.capacity))) {
        edge.capacity -= pushed;
        edges_[e ^ 1].capacity += pushed;
        return pushed;
      }
    }
    return 0;
  }

  std::vector<Edge> edges_;
  std::vector<int> head_, level_, next_edge_;
};

}  // namespace

namespace {

// The covering pairs of the order: b is a direct successor of a when no c lies between them.
// Enough for the flow (with pass-through edges the chains may skip elements) and far fewer than
// every ordered pair.
std::vector<std::vector<int>> DirectSuccessors(const PackingProblem& problem) {
  const int m = problem.size();
  std::vector<std::vector<int>> direct(m);
  for (int a = 0; a < m; ++a) {
    Bitset candidates = problem.precedes[a];
    for (int b = 0; b < m; ++b) {
      if (!candidates.Test(b)) continue;  // not a successor, or above one already taken
      direct[a].push_back(b);
      candidates.AndNot(problem.precedes[b]);
    }
  }
  return direct;
}

}  // namespace

int64_t MaxWeightAntichain(const PackingProblem& problem, std::vector<int>* antichain) {
  const int m = problem.size();
  // Nodes: a_out = a, b_in = m + b, source = 2m, sink = 2m + 1. A chain enters b at b_in and
  // leaves at b_out; the pass-through edge b_in -> b_out lets a chain skip b.
  const int source = 2 * m, sink = 2 * m + 1;
  MaxFlow flow(2 * m + 2);
  int64_t total = 0;
  const std::vector<std::vector<int>> direct = DirectSuccessors(problem);
  for (int a = 0; a < m; ++a) {
    total += problem.bytes[a];
    flow.AddEdge(source, a, problem.bytes[a]);
    flow.AddEdge(m + a, sink, problem.bytes[a]);
    flow.AddEdge(m + a, a, kInfinite);
    for (int b : direct[a]) flow.AddEdge(a, m + b, kInfinite);
  }
  const int64_t bound = total - flow.Run(source, sink);
  if (antichain != nullptr) {
    // Minimum cut: a is in the antichain when a_out is on the source side and a_in is not.
    antichain->clear();
    for (int a = 0; a < m; ++a) {
      if (flow.OnSourceSide(a) && !flow.OnSourceSide(m + a)) antichain->push_back(a);
    }
  }
  return bound;
}

}  // namespace braid
