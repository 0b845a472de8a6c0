#include "planner/exact_packing.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>
#include <utility>

namespace braid {
namespace {

enum class PairRule { kFree, kDisjoint, kSameOrDisjoint };

bool Overlap(int64_t offset_a, int64_t bytes_a, int64_t offset_b, int64_t bytes_b) {
  return bytes_a > 0 && bytes_b > 0 && offset_a < offset_b + bytes_b &&
         offset_b < offset_a + bytes_a;
}

class ExactPacker {
 public:
  explicit ExactPacker(const PackingProblem& p);
  std::vector<int64_t> Solve();

 private:
  struct Edge {
    int to;
    int64_t weight;
  };
  struct Decision {  // offset[to] >= offset[from] + weight
    int from, to;
    int64_t weight;
  };

  bool Violated(int a, int b) const;
  bool ValidPacking(const std::vector<int64_t>& offsets) const;
  void HeaviestClique(uint32_t candidates, int64_t weight, int64_t* best) const;
  bool FindViolatedPair(int* a, int* b) const;
  std::vector<std::vector<Decision>> Branches(int a, int b) const;
  bool Apply(const Decision& d);
  void Undo(size_t trail_mark, size_t edge_mark);
  void Search();

  const PackingProblem& p_;
  const int n_;
  std::vector<std::vector<PairRule>> rule_;
  std::vector<uint32_t> conflicts_;  // conflicts_[a]: bit b set when a and b must be disjoint
  std::vector<std::vector<Edge>> out_;
  std::vector<int> edge_log_;                   // `from` of each applied edge, in order
  std::vector<int64_t> offset_;                 // longest paths under the applied edges
  std::vector<std::pair<int, int64_t>> trail_;  // (blob, previous offset) for undo
  std::vector<int64_t> best_;
  int64_t best_size_ = 0;
  int64_t lower_bound_ = 0;
};

ExactPacker::ExactPacker(const PackingProblem& p)
    : p_(p),
      n_(p.size()),
      rule_(n_, std::vector<PairRule>(n_, PairRule::kFree)),
      conflicts_(n_, 0),
      out_(n_),
      offset_(n_, 0) {
  for (int a = 0; a < n_; ++a) {
    for (int b = 0; b < n_; ++b) {
      if (a == b) continue;
      if (!p.Comparable(a, b)) {
        rule_[a][b] = PairRule::kDisjoint;
        conflicts_[a] |= uint32_t{1} << b;
      } else if (p.same_offset.count({a, b}) || p.same_offset.count({b, a})) {
        rule_[a][b] = PairRule::kSameOrDisjoint;
      }
    }
  }
}

bool ExactPacker::Violated(int a, int b) const {
  if (rule_[a][b] == PairRule::kFree) return false;
  if (rule_[a][b] == PairRule::kSameOrDisjoint && offset_[a] == offset_[b]) return false;
  return Overlap(offset_[a], p_.bytes[a], offset_[b], p_.bytes[b]);
}

bool ExactPacker::ValidPacking(const std::vector<int64_t>& offsets) const {
  if (static_cast<int>(offsets.size()) != n_) return false;
  for (int a = 0; a < n_; ++a) {
    if (offsets[a] < 0) return false;
    for (int b = a + 1; b < n_; ++b) {
      if (rule_[a][b] == PairRule::kFree) continue;
      if (rule_[a][b] == PairRule::kSameOrDisjoint && offsets[a] == offsets[b]) continue;
      if (Overlap(offsets[a], p_.bytes[a], offsets[b], p_.bytes[b])) return false;
    }
  }
  return true;
}

// Pairwise conflicting blobs need disjoint bytes: the heaviest such clique, by branching on whether
// the lowest candidate joins, pruned when even every candidate could not beat the best.
void ExactPacker::HeaviestClique(uint32_t candidates, int64_t weight, int64_t* best) const {
  int64_t reachable = weight;
  for (uint32_t rest = candidates; rest != 0; rest &= rest - 1) {
    reachable += p_.bytes[std::countr_zero(rest)];
  }
  if (reachable <= *best) return;
  if (candidates == 0) {
    *best = weight;
    return;
  }
  const int v = std::countr_zero(candidates);
  HeaviestClique(candidates & conflicts_[v], weight + p_.bytes[v], best);
  HeaviestClique(candidates & ~(uint32_t{1} << v), weight, best);
}

// The violated pair with the largest smaller blob: deciding it moves the most bytes.
bool ExactPacker::FindViolatedPair(int* a, int* b) const {
  int64_t weight = -1;
  for (int x = 0; x < n_; ++x) {
    for (int y = x + 1; y < n_; ++y) {
      if (!Violated(x, y)) continue;
      const int64_t w = std::min(p_.bytes[x], p_.bytes[y]);
      if (w > weight) {
        weight = w;
        *a = x;
        *b = y;
      }
    }
  }
  return weight >= 0;
}

// Sharing one offset first (it costs nothing), then the blob lying lower now stays below.
std::vector<std::vector<ExactPacker::Decision>> ExactPacker::Branches(int a, int b) const {
  if (offset_[b] < offset_[a] || (offset_[b] == offset_[a] && p_.bytes[b] > p_.bytes[a])) {
    std::swap(a, b);
  }
  std::vector<std::vector<Decision>> branches;
  if (rule_[a][b] == PairRule::kSameOrDisjoint) branches.push_back({{a, b, 0}, {b, a, 0}});
  branches.push_back({{a, b, p_.bytes[a]}});
  branches.push_back({{b, a, p_.bytes[b]}});
  return branches;
}

// Adds offset[d.to] >= offset[d.from] + d.weight and raises offsets along longest paths. False
// when the edge closes a positive cycle (the decisions contradict) or some blob then reaches the
// incumbent's size (nothing below can beat it).
bool ExactPacker::Apply(const Decision& d) {
  out_[d.from].push_back({d.to, d.weight});
  edge_log_.push_back(d.from);
  std::vector<int> work;
  auto raise = [&](int from, const Edge& e) {
    const int64_t need = offset_[from] + e.weight;
    if (offset_[e.to] >= need) return true;
    if (e.to == d.from || need + p_.bytes[e.to] >= best_size_) return false;
    trail_.emplace_back(e.to, offset_[e.to]);
    offset_[e.to] = need;
    work.push_back(e.to);
    return true;
  };
  if (!raise(d.from, {d.to, d.weight})) return false;
  while (!work.empty()) {
    const int x = work.back();
    work.pop_back();
    for (const Edge& e : out_[x]) {
      if (!raise(x, e)) return false;
    }
  }
  return true;
}

void ExactPacker::Undo(size_t trail_mark, size_t edge_mark) {
  while (trail_.size() > trail_mark) {
    offset_[trail_.back().first] = trail_.back().second;
    trail_.pop_back();
  }
  while (edge_log_.size() > edge_mark) {
    out_[edge_log_.back()].pop_back();
    edge_log_.pop_back();
  }
}

void ExactPacker::Search() {
  // Blobs no decision has raised may sit above an incumbent found since they were placed.
  if (ArenaSize(p_, offset_) >= best_size_) return;
  int a = -1, b = -1;
  if (!FindViolatedPair(&a, &b)) {
    best_ = offset_;
    best_size_ = ArenaSize(p_, offset_);
    return;
  }
  for (const std::vector<Decision>& branch : Branches(a, b)) {
    if (best_size_ <= lower_bound_) return;
    const size_t trail_mark = trail_.size(), edge_mark = edge_log_.size();
    bool feasible = true;
    for (const Decision& d : branch) feasible = feasible && Apply(d);
    if (feasible) Search();
    Undo(trail_mark, edge_mark);
  }
}

std::vector<int64_t> ExactPacker::Solve() {
  best_ = PackGreedy(p_);
  if (!ValidPacking(best_)) {  // stacking every blob is always valid
    best_.assign(n_, 0);
    for (int b = 1; b < n_; ++b) best_[b] = best_[b - 1] + p_.bytes[b - 1];
  }
  best_size_ = ArenaSize(p_, best_);
  HeaviestClique((uint32_t{1} << n_) - 1, 0, &lower_bound_);
  const bool roots_fit = std::all_of(p_.bytes.begin(), p_.bytes.end(),
                                     [&](int64_t bytes) { return bytes < best_size_; });
  if (roots_fit) Search();
  return best_;
}

}  // namespace

std::vector<int64_t> PackExact(const PackingProblem& problem) {
  if (problem.size() > kMaxExactBlobs) {
    throw std::invalid_argument("PackExact: " + std::to_string(problem.size()) +
                                " blobs, more than the " + std::to_string(kMaxExactBlobs) +
                                " an exact search handles");
  }
  return ExactPacker(problem).Solve();
}

}  // namespace braid
