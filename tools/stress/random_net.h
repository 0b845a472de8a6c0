// Random nets for executor and planner tests: fills, then a random mix of Sum, Add, Mul, Relu and
// Copy over equally shaped float blobs, with in-place ops, overwrites of live blobs (write-after-
// read and write-after-write hazards) and control inputs. Same seed, same net.
#ifndef BRAID_TESTS_RUNTIME_RANDOM_NET_H_
#define BRAID_TESTS_RUNTIME_RANDOM_NET_H_

#include <cstdint>

#include "proto/braid.pb.h"

namespace braid::testing {

struct RandomNetOptions {
  int num_inputs = 4;   // UniformFill ops at the start
  int num_ops = 40;     // ops after the fills
  int blob_size = 16;   // every blob is float32[blob_size]
};

NetDef RandomNet(uint64_t seed, const RandomNetOptions& options = {});

}  // namespace braid::testing

#endif  // BRAID_TESTS_RUNTIME_RANDOM_NET_H_
