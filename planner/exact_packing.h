// PackExact: the smallest arena for a small PackingProblem, used by tests to measure PackGreedy.
//
// Branch and bound over which of two blobs lies below the other. The offsets of a set of such
// decisions are longest paths in the DAG they form (a below b: offset[b] >= offset[a] + bytes[a]),
// kept incrementally. At each node the search picks a pair that may not overlap but currently does
// and branches on its two orders; a same_offset pair may also share one offset, which is a third
// branch. Pairs whose order the decisions already imply never overlap, so they are never branched.
// Nodes whose arena reaches the incumbent (first PackGreedy's) are pruned, and the search stops
// when it meets the lower bound of the heaviest set of pairwise conflicting blobs.
// Offsets are sums of sizes, so they keep whatever alignment the sizes have.
//
//   std::vector<int64_t> offsets = PackExact(problem);   // ArenaSize(problem, offsets) is minimal
//
// Exponential in the worst case: throws std::invalid_argument above kMaxExactBlobs blobs. Mostly
// ordered problems solve in microseconds; 25-30 blobs with few orderings can take seconds.
// Pure function; thread-safe.
#ifndef BRAID_PLANNER_EXACT_PACKING_H_
#define BRAID_PLANNER_EXACT_PACKING_H_

#include <cstdint>
#include <vector>

#include "planner/packing_problem.h"

namespace braid {

inline constexpr int kMaxExactBlobs = 30;

// Offsets of a valid packing with the smallest possible ArenaSize.
std::vector<int64_t> PackExact(const PackingProblem& problem);

}  // namespace braid

#endif  // BRAID_PLANNER_EXACT_PACKING_H_
