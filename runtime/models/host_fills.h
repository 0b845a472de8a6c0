// MoveRandomFillsToHost: an init net whose random parameter fills run on the host and are copied
// to their devices, so that one seed gives bit-identical initial weights on cpu, sim and cuda.
//
// A fill's values come from its own random stream (planner/op_seed.h): on the host and on sim,
// which runs the CPU kernels, from the CPU kernel's generator; on cuda from cuRAND, which draws
// other values from the same seed (ops/fill/cuda_fill.h). Moved to the host, a GPU run starts from
// the CPU run's weights, and the two can be compared step by step. TrainingLoop does this by
// default (TrainingLoopOptions::init_on_host; braid_train --init_on_host). The cost, once per run:
// the random fills run on the host's CPU kernels instead of the GPU, plus one host-to-device copy
// per parameter; the host copies are freed once the init net has run.
//
// Every op of `init` that draws random values (GaussianFill, MSRAFill, XavierFill, UniformFill,
// UniformIntFill), is placed on a device other than the host and reads no input, is rewritten:
//   before  op { type: "MSRAFill" output: "gpu_0/conv1_w" device_option { cuda:0 } ... }
//   after   op { type: "MSRAFill" output: "host/gpu_0/conv1_w" arg { seed: <its own> } ... }
//           op { type: "CopyCPUToGPU" input: "host/gpu_0/conv1_w" output: "gpu_0/conv1_w"
//                device_option { cuda:0 } }
// The fill keeps the seed it had (a `seed` argument pins it: renaming its output would change the
// default one), so it draws what the CPU kernel draws for the op wherever it runs. Other ops
// (ConstantFill, the copies that broadcast device 0's parameters to the other replicas,
// runtime/models/data_parallel.h) are left as they are, in order after their fills.
//
//   std::vector<std::string> staged = MoveRandomFillsToHost(&nets.params.init_net);
//   workspace.RunNetOnce(nets.params.init_net);
//   for (const std::string& blob : staged) workspace.GetBlob(blob)->FreeMemory();
//
// Returns the host blobs the rewritten fills write, in order. Pure function; thread-safe.
#ifndef BRAID_RUNTIME_MODELS_HOST_FILLS_H_
#define BRAID_RUNTIME_MODELS_HOST_FILLS_H_

#include <string>
#include <vector>

#include "proto/braid.pb.h"

namespace braid {

// Whether ops of `type` draw random values from their seed (the fills MoveRandomFillsToHost moves).
bool IsRandomFill(const std::string& type);

std::vector<std::string> MoveRandomFillsToHost(NetDef* init);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_HOST_FILLS_H_
