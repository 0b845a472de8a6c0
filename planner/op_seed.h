// OpSeed: the seed of an op's random stream, from its definition alone.
//
// Its `seed` argument if it has one, else its device option's random_seed, else a hash (FNV-1a) of
// its first output's name, so a fill gives the same values on any schedule. It lives below the
// runtime because net rewrites depend on it: renaming an op's first output changes the default
// seed, so planner/renaming.h pins it with a `seed` argument, and planner/verify_plan.h compares
// effective seeds. OperatorBase::rng (runtime/core/operator.h) seeds with this.
//
// Pure function; thread-safe.
#ifndef BRAID_PLANNER_OP_SEED_H_
#define BRAID_PLANNER_OP_SEED_H_

#include <cstdint>

#include "proto/braid.pb.h"

namespace braid {

uint64_t OpSeed(const OperatorDef& def);
// Whether def names its seed (a `seed` argument or a device random_seed) rather than deriving it.
bool HasExplicitSeed(const OperatorDef& def);

}  // namespace braid

#endif  // BRAID_PLANNER_OP_SEED_H_
