// PackingProblem: blobs of one arena, their sizes, and which pairs may overlap in memory.
//
// precedes is a strict partial order (transitively closed): a precedes b means a is dead before b
// is born, so the two may overlap anywhere. Pairs (a, b) in same_offset (a subset of precedes: a
// dies in place into b) may overlap only when they start at the same offset. Every other pair must
// be disjoint. The assignment algorithms (greedy, exact) and the lower bound work on this alone.
//
//   PackingProblem p = PackingProblemFor(lifetimes, {0, 1, 2});
//   std::vector<int64_t> offsets = PackGreedy(p);
//   int64_t size = ArenaSize(p, offsets);
//
// A plain value; thread-safe to read.
#ifndef BRAID_PLANNER_PACKING_PROBLEM_H_
#define BRAID_PLANNER_PACKING_PROBLEM_H_

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "planner/bitset.h"
#include "planner/blob_lifetimes.h"

namespace braid {

struct PackingProblem {
  std::vector<int64_t> bytes;
  std::vector<Bitset> precedes;
  std::set<std::pair<int, int>> same_offset;

  int size() const { return static_cast<int>(bytes.size()); }
  bool Comparable(int a, int b) const { return precedes[a].Test(b) || precedes[b].Test(a); }
  // Whether a at offset_a and b at offset_b may share bytes.
  bool MayOverlap(int a, int b, int64_t offset_a, int64_t offset_b) const;
};

// The problem of `blobs` (indices into lifetimes.blobs(), one device), in that order, with
// precedence closed over the in-place pairs.
PackingProblem PackingProblemFor(const BlobLifetimes& lifetimes, const std::vector<int>& blobs);

// The arena size offsets need: the largest offset + bytes (0 for no blobs).
int64_t ArenaSize(const PackingProblem& problem, const std::vector<int64_t>& offsets);

// Offsets of a valid packing by greedy best fit: several placement orders (largest first, first
// born first, most conflicting bytes first, then perturbed largest-first orders within a budget of
// work that shrinks as the problem grows) and the smallest arena among them. Stops early once an
// arena is at most `good_enough` bytes (pass the lower bound: nothing can beat it).
std::vector<int64_t> PackGreedy(const PackingProblem& problem, int64_t good_enough = 0);

}  // namespace braid

#endif  // BRAID_PLANNER_PACKING_PROBLEM_H_
