// Allocation traces for braid_bench_allocator: the Allocate/Free sequence of training steps of a
// ResNet-like net, replayed against any Allocator, so the caching allocator and the no-cache
// baseline serve exactly the same requests.
//
// The net: a CIFAR-style ResNet-18 (32x32 input, a stem conv, four stages of two basic blocks,
// widths 64/128/256/512 at 32/16/8/4 pixels), float32. A step allocates, per conv, a short-lived
// workspace (im2col-sized, at most 32 MiB), its activation, two BatchNorm statistics (C floats) and
// a residual sum at each block end, all kept until the backward pass; the backward pass allocates
// each input gradient and weight gradient and frees the output gradient, the activations (last
// first) and the statistics (in another order than allocated); the optimizer frees the weight
// gradients in forward order (not the backward order they were allocated in), each after a
// weight-sized temporary. The next step's input is allocated mid-step (a prefetching reader), so
// lifetimes overlap across steps. Parameters, BatchNorm affine terms and momentum buffers live from
// Setup to Teardown. Small blocks (<= 1 MiB: statistics, small weights, logits) mix with large ones
// (activations grow with the batch from 2 MiB to 32 MiB at stage 1), and requests cross the
// CachingAllocator's small/large boundary as the batch grows.
//
//   ResNetLikeTrace trace;
//   TraceReplayer replay(allocator);
//   replay.Run(trace.Setup());
//   for (int batch : {8, 16, 32}) PhaseResult r = replay.Run(trace.Phase(batch, /*steps=*/3));
//   replay.Run(trace.Teardown());
//
// Thread safety: none; use each object from one thread.
#ifndef BRAID_TOOLS_BENCH_ALLOCATION_TRACE_H_
#define BRAID_TOOLS_BENCH_ALLOCATION_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "runtime/core/allocator.h"

namespace braid::bench {

struct TraceOp {
  enum Kind { kAllocate, kFree, kMidStep };
  Kind kind;
  int64_t id;    // the block: unique over a trace's whole life (Setup, Phases, Teardown)
  size_t bytes;  // requested (the same in a block's Allocate and Free)
};

class ResNetLikeTrace {
 public:
  ResNetLikeTrace();
  std::vector<TraceOp> Setup();  // parameters and optimizer state
  // `steps` training steps at `batch`; a kMidStep op after each forward pass (activations live).
  std::vector<TraceOp> Phase(int batch, int steps);
  std::vector<TraceOp> Teardown();  // frees what Setup allocated
  // One more than the largest id so far.
  int64_t next_id() const { return next_id_; }

 private:
  struct Conv {
    int64_t in_c, out_c, in_hw, out_hw;
    bool block_end;  // a residual sum follows
  };
  struct Forward {
    std::vector<int64_t> act, sum, mean, inv_std;  // per conv (sum: -1 where none)
    int64_t logits = -1, loss = -1;
  };

  int64_t Allocate(size_t bytes);
  void Free(int64_t id);
  Forward ForwardPass(int64_t batch);
  std::vector<int64_t> BackwardPass(int64_t batch, const Forward& f);  // weight gradients
  void OptimizerStep(const std::vector<int64_t>& weight_grads);
  std::vector<TraceOp> Take();

  std::vector<Conv> convs_;
  std::vector<int64_t> persistent_;
  std::unordered_map<int64_t, size_t> live_;  // id -> bytes
  std::vector<TraceOp> ops_;
  int64_t next_id_ = 0;
};

// What one replay of a trace saw.
struct PhaseResult {
  double seconds = 0;       // wall time of the replay
  int64_t allocations = 0;  // Allocate calls
  int64_t peak_in_use = 0;  // requested bytes live at once, at most, during the replay
  AllocatorStats mid_step;  // the allocator's stats at the replay's last kMidStep
  AllocatorStats end;       // ... and after its last op
};

class TraceReplayer {
 public:
  explicit TraceReplayer(Allocator* allocator) : allocator_(allocator) {}
  PhaseResult Run(const std::vector<TraceOp>& ops);

 private:
  Allocator* const allocator_;
  std::vector<void*> blocks_;  // by id
  int64_t in_use_ = 0;
};

}  // namespace braid::bench

#endif  // BRAID_TOOLS_BENCH_ALLOCATION_TRACE_H_
