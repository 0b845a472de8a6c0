#include "planner/packing_problem.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

namespace braid {
namespace {

struct Interval {
  int64_t begin, end;
  int owner;  // the placed blob occupying it
};

// Smallest free gap of at least `bytes` between the sorted occupied intervals (best fit; the lowest
// offset on ties); the top of the highest interval when no gap fits.
int64_t BestFit(std::vector<Interval>* occupied, int64_t bytes) {
  std::sort(occupied->begin(), occupied->end(),
            [](const Interval& x, const Interval& y) { return x.begin < y.begin; });
  int64_t best = -1, best_waste = std::numeric_limits<int64_t>::max();
  int64_t free_from = 0;
  for (const Interval& in : *occupied) {
    const int64_t gap = in.begin - free_from;
    if (gap >= bytes && gap - bytes < best_waste) {
      best = free_from;
      best_waste = gap - bytes;
    }
    free_from = std::max(free_from, in.end);
  }
  return best >= 0 ? best : free_from;
}

bool Fits(const std::vector<Interval>& occupied, int64_t offset, int64_t bytes) {
  return std::none_of(occupied.begin(), occupied.end(), [&](const Interval& in) {
    return in.begin < offset + bytes && offset < in.end;
  });
}

// Places blobs in `order`, each at its best fit among the placed blobs it may not overlap; a blob
// that may die in place into (or out of) a placed one takes that one's offset when it fits there.
std::vector<int64_t> PlaceInOrder(const PackingProblem& p, const std::vector<int>& order) {
  std::vector<int64_t> offset(p.size(), -1);
  std::vector<int> placed;
  std::vector<Interval> occupied;
  for (int b : order) {
    occupied.clear();
    std::vector<int> partners;
    for (int q : placed) {
      const bool partner = p.same_offset.count({q, b}) || p.same_offset.count({b, q});
      if (partner) partners.push_back(q);
      // A partner clashes anywhere but at its own offset.
      if (partner || !p.Comparable(q, b))
        occupied.push_back({offset[q], offset[q] + p.bytes[q], q});
    }
    int64_t chosen = -1;
    for (int q : partners) {
      std::vector<Interval> others;
      for (const Interval& in : occupied) {
        if (in.owner != q) others.push_back(in);
      }
      if (Fits(others, offset[q], p.bytes[b])) {
        chosen = offset[q];
        break;
      }
    }
    offset[b] = chosen >= 0 ? chosen : BestFit(&occupied, p.bytes[b]);
    placed.push_back(b);
  }
  return offset;
}

}  // namespace

bool PackingProblem::MayOverlap(int a, int b, int64_t offset_a, int64_t offset_b) const {
  if (!Comparable(a, b)) return false;
  if (same_offset.count({a, b}) || same_offset.count({b, a})) return offset_a == offset_b;
  return true;
}

PackingProblem PackingProblemFor(const BlobLifetimes& lifetimes, const std::vector<int>& blobs) {
  const int m = static_cast<int>(blobs.size());
  PackingProblem p;
  p.precedes.assign(m, Bitset(m));
  std::vector<int> local(lifetimes.num_blobs(), -1);
  for (int i = 0; i < m; ++i) local[blobs[i]] = i;
  for (int i = 0; i < m; ++i) {
    p.bytes.push_back(lifetimes.blobs()[blobs[i]].bytes);
    for (int j = 0; j < m; ++j) {
      if (lifetimes.Precedes(blobs[i], blobs[j])) p.precedes[i].Set(j);
    }
  }
  std::vector<std::pair<int, int>> inplace;
  for (auto [a, b] : lifetimes.inplace()) {
    if (local[a] >= 0 && local[b] >= 0) inplace.emplace_back(local[a], local[b]);
  }
  for (auto [a, b] : inplace) p.same_offset.insert({a, b});
  // Close precedence over the in-place pairs. blobs are ordered by first write and every pair
  // points forward, so one sweep from the last blob to the first suffices.
  for (int a = m - 1; a >= 0 && !inplace.empty(); --a) {
    for (auto [x, y] : inplace) {
      if (x != a && !p.precedes[a].Test(x)) continue;
      p.precedes[a].Set(y);
      p.precedes[a].OrWith(p.precedes[y]);
    }
  }
  return p;
}

int64_t ArenaSize(const PackingProblem& problem, const std::vector<int64_t>& offsets) {
  int64_t size = 0;
  for (int b = 0; b < problem.size(); ++b) size = std::max(size, offsets[b] + problem.bytes[b]);
  return size;
}

std::vector<int64_t> PackGreedy(const PackingProblem& p, int64_t good_enough) {
  const int m = p.size();
  std::vector<int> by_birth(m);
  std::iota(by_birth.begin(), by_birth.end(), 0);
  std::vector<int> by_size = by_birth;
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](int x, int y) { return p.bytes[x] > p.bytes[y]; });
  std::vector<int64_t> conflict_bytes(m, 0);
  for (int a = 0; a < m; ++a) {
    for (int b = 0; b < m; ++b) {
      if (a != b && !p.Comparable(a, b)) conflict_bytes[a] += p.bytes[b];
    }
  }
  std::vector<int> by_conflict = by_size;
  std::stable_sort(by_conflict.begin(), by_conflict.end(), [&](int x, int y) {
    return conflict_bytes[x] + p.bytes[x] > conflict_bytes[y] + p.bytes[y];
  });
  std::vector<std::vector<int>> orders = {by_size, by_birth, by_conflict};
  // Perturbed largest-first orders (a fixed seed: plans are reproducible), as many as a budget of
  // about kBudget pairwise checks allows: small problems get many, huge ones none.
  constexpr int64_t kBudget = 4'000'000;
  const int64_t tries = std::min<int64_t>(32, kBudget / std::max<int64_t>(1, int64_t{m} * m));
  std::mt19937 rng(m);
  for (int64_t t = 0; t < tries; ++t) {
    std::vector<int> order = by_size;
    for (int i = 0; i + 1 < m; ++i) {
      if (rng() % 4 == 0) std::swap(order[i], order[i + 1 + rng() % std::min(4, m - i - 1)]);
    }
    orders.push_back(std::move(order));
  }
  std::vector<int64_t> best;
  int64_t best_size = std::numeric_limits<int64_t>::max();
  for (const std::vector<int>& order : orders) {
    std::vector<int64_t> offsets = PlaceInOrder(p, order);
    const int64_t size = ArenaSize(p, offsets);
    if (size < best_size) {
      best_size = size;
      best = std::move(offsets);
    }
    if (best_size <= good_enough) break;
  }
  return best;
}

}  // namespace braid
