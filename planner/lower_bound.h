// The lower bound on any packing: the heaviest set of blobs that are pairwise incomparable.
//
// Blobs no order separates may all be alive at once under some schedule, so they need disjoint
// memory: no valid arena is smaller than the maximum-weight antichain of the precedence order. By
// the weighted form of Dilworth's theorem it equals the minimum weighted chain cover, which is the
// total weight minus a maximum flow in the split graph: source -> a_out with capacity bytes[a],
// a_out -> b_in for each covering pair (b directly above a), b_in -> sink with capacity bytes[b],
// and b_in -> b_out so chains may pass through b; the antichain is read off a minimum cut. For the
// simple executor this is the peak of live bytes in listed order.
//
//   std::vector<int> heaviest;
//   int64_t bound = MaxWeightAntichain(problem, &heaviest);
//
// Pure function; thread-safe.
#ifndef BRAID_PLANNER_LOWER_BOUND_H_
#define BRAID_PLANNER_LOWER_BOUND_H_

#include <cstdint>
#include <vector>

#include "planner/packing_problem.h"

namespace braid {

// Weight of the heaviest antichain of problem.precedes; its members in *antichain when not null.
int64_t MaxWeightAntichain(const PackingProblem& problem, std::vector<int>* antichain = nullptr);

}  // namespace braid

#endif  // BRAID_PLANNER_LOWER_BOUND_H_
