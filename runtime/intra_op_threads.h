// Intra-op threads: how many OpenMP threads each op of a net may use, and keeping ops that run at
// the same time from oversubscribing the cores.
//
// Kernels parallelise inside an op on OpenMP (oneDNN, OpenBLAS and the elementwise ops all run on
// libgomp). An op that runs alone should use every core; ops that run side by side must share them
// (two 2-thread teams on 2 cores spin against each other: data-parallel ResNet-20 ran ~10x slower).
// oneDNN fixes a primitive's team when the primitive is made and its results depend on it, so the
// budget must be a fixed function of the net, never of timing. IntraOpBudgets gives each op
//   threads / k,  k = the most critical ops (ops on a longest path of the net, counted in ops)
//                     at one depth of that path that may run beside it while it may run, plus
//                     itself when it is critical (at least 1, at most `concurrency`),
// where two ops may run beside each other when neither depends on the other (planner/dataflow.h)
// and they are not on one serial resource (the simple executor's thread, one device stream), and
// an op may run at the depths between its earliest start and its latest one that does not
// lengthen the path. So one device's ResNet gets full teams everywhere (its side branches, the
// updates and a projection shortcut, lie off the one critical path), and two replicas, whose
// paths run side by side, get half each.
//
// When its net may run ops concurrently, an op with a team of n threads holds n of the process's
// core tokens (one per hardware thread) while it runs: a full-team op and a side op then take
// turns instead of oversubscribing the cores, and one-thread ops run side by side up to the core
// count. Collectives take none (a half waiting for its peers must not hold the cores they need).
//
//   std::vector<int> threads = IntraOpBudgets(g, resource_of, /*concurrency=*/2, /*threads=*/2);
//   SetIntraOpThreads(threads[i]);
//   { CoreTokensHeld held(threads[i]); op.Run(); }   // when the net may run ops side by side
//
// Thread safety: IntraOpBudgets is a pure function. SetIntraOpThreads changes only the calling
// thread's OpenMP setting; the core tokens are guarded by their own mutex.
#ifndef BRAID_RUNTIME_INTRA_OP_THREADS_H_
#define BRAID_RUNTIME_INTRA_OP_THREADS_H_

#include <vector>

#include "planner/dataflow.h"
#include "proto/braid.pb.h"

namespace braid {

// OpenMP threads an op may use when it runs alone: OMP_NUM_THREADS (or the hardware threads), as
// the process started.
int ProcessIntraOpThreads();

// Per op of `g`: its OpenMP threads (see the file comment). resource_of[i]: the serial resource op
// i runs on, or -1 when it has none of its own (the dag executor's workers).
std::vector<int> IntraOpBudgets(const DataflowGraph& g, const std::vector<int>& resource_of,
                                int concurrency, int threads);

// The budgets of `def`'s ops as above, or every op its intra_op_threads argument when set.
std::vector<int> IntraOpBudgetsFor(const NetDef& def, const DataflowGraph& g,
                                   const std::vector<int>& resource_of, int concurrency);

// Makes `threads` the calling thread's OpenMP team size (omp_set_num_threads, when it differs).
void SetIntraOpThreads(int threads);
// The calling thread's OpenMP team size (omp_get_max_threads).
int IntraOpThreads();

// Holds `threads` core tokens (at least one, at most all) while it lives, waiting for them first.
class CoreTokensHeld {
 public:
  explicit CoreTokensHeld(int threads);
  ~CoreTokensHeld();
  CoreTokensHeld(const CoreTokensHeld&) = delete;
  CoreTokensHeld& operator=(const CoreTokensHeld&) = delete;

 private:
  int held_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_INTRA_OP_THREADS_H_
