// Net shapes for the executor benchmark: NetDefs of NoOp ops whose edges are pure dataflow.
//
// Op i writes blob "b<i>" and reads its predecessors' blobs, so planner/dataflow.h derives exactly
// the intended edges (read-after-write only). Every builder returns a "dag" net with the
// num_workers argument set; the caller names the net.
//
//   NetDef def = RandomLayeredDag(100000, 64, /*seed=*/42, /*workers=*/2);
//   Net* net = ws.CreateNet(def);
//
// Pure functions; thread-safe.
#ifndef BRAID_TOOLS_BENCH_EXECUTOR_NETS_H_
#define BRAID_TOOLS_BENCH_EXECUTOR_NETS_H_

#include <cstdint>

#include "proto/braid.pb.h"

namespace braid::bench {

// num_ops ops in layers of `width`; each op past the first layer reads 1 or 2 distinct ops of the
// previous layer, chosen with a std::mt19937_64 seeded by `seed`.
NetDef RandomLayeredDag(int num_ops, int width, uint64_t seed, int workers);

// num_ops ops, each reading the one before it.
NetDef Chain(int num_ops, int workers);

// Blocks of one source, `width` middle ops reading the source and one sink reading every middle
// op; each block's source reads the previous block's sink. As many blocks as bring the total
// nearest to num_ops (at least one).
NetDef FanOutFanIn(int num_ops, int width, int workers);

}  // namespace braid::bench

#endif  // BRAID_TOOLS_BENCH_EXECUTOR_NETS_H_
