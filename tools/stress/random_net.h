// Random nets for the executor and planner tests and braid_stress: fills, then a random mix of Sum,
// Add, Mul, Relu and Copy over equally shaped float blobs, with in-place ops, overwrites of live
// blobs (write-after-read and write-after-write hazards) and control inputs; optionally Concat +
// Split pairs (a double-size blob cut back into two) and ops spread over several CPU devices and
// simulated GPUs (sim:0, sim:1, ...). An op reading a blob held on another device (another memory:
// a sim device, or the host) reads a copy made just before it: CopyCPUToGPU, CopyGPUToCPU, or a
// Copy from one sim device to another.
// Only the listed blobs that end the net are external outputs unless all_outputs is set, so a
// planner has blobs to recycle. Same seed, same net.
#ifndef BRAID_TOOLS_STRESS_RANDOM_NET_H_
#define BRAID_TOOLS_STRESS_RANDOM_NET_H_

#include <cstdint>

#include "proto/braid.pb.h"

namespace braid {

struct RandomNetOptions {
  int num_inputs = 4;         // UniformFill ops at the start
  int num_ops = 40;           // ops after the fills
  int blob_size = 16;         // every blob is float32[blob_size]
  bool concat_split = false;  // also Concat two blobs and Split the result back into two
  int num_devices = 1;        // ops run on cpu:0 .. cpu:num_devices-1 (device_option per op)
  int num_sim_devices = 0;    // ... and on sim:0 .. sim:num_sim_devices-1
  bool all_outputs = true;    // every blob is an external output; else only the last few
};

NetDef RandomNet(uint64_t seed, const RandomNetOptions& options = {});

}  // namespace braid

#endif  // BRAID_TOOLS_STRESS_RANDOM_NET_H_
