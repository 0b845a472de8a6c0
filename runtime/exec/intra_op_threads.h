// Intra-op threads: how many OpenMP threads each op of a net may use, and keeping ops that run at
// the same time from oversubscribing the cores.
//
// Kernels parallelise inside an op on OpenMP (oneDNN, OpenBLAS and the elementwise ops all run on
// libgomp). An op that runs alone should use every core; ops that run side by side must share them
// (two 2-thread teams on 2 cores spin against each other: README, "Measurements behind the
// design"). oneDNN fixes a primitive's team when the primitive is made and its results depend on
// it, so the budget must be a fixed function of the net, never of timing. IntraOpBudgets gives
// each op
//   threads / k,  k = OpsAtOnce: the critical ops (on a longest path of the net, counted in
//                     ops) that may run beside it, plus itself when it is critical (at least 1,
//                     at most `concurrency`),
// where two ops may run beside each other when neither depends on the other (planner/dataflow.h)
// and they are not on one serial resource (the simple executor's thread, one device stream); the
// executors start an op as soon as its parents are done, so its neighbours are the critical ops at
// the depth of the path where it becomes ready. So one device's ResNet gets full teams everywhere
// (its side branches, the updates and a projection shortcut, lie off the one critical path), and
// two replicas, whose paths run side by side, get half each.
//
// When a net's teams could oversubscribe the cores (an op with a team of several threads may run
// beside another op, or more ops may run at once than there are hardware threads), each op holds
// as many of the process's core tokens (one per hardware thread) as its team has threads while it
// runs: a full-team op and a side op then take turns, and one-thread ops run side by side up to
// the core count. Collectives take none (a half waiting for its peers must not hold the cores
// they need).
//
//   std::vector<int> threads = IntraOpBudgets(def, OpsAtOnce(g, resource_of, /*concurrency=*/2));
//   SetIntraOpThreads(threads[i]);
//   { CoreTokensHeld held(threads[i]); op.Run(); }   // when the net may run ops side by side
//
// Thread safety: IntraOpBudgets is a pure function. SetIntraOpThreads changes only the calling
// thread's OpenMP setting; the core tokens are guarded by their own mutex.
#ifndef BRAID_RUNTIME_EXEC_INTRA_OP_THREADS_H_
#define BRAID_RUNTIME_EXEC_INTRA_OP_THREADS_H_

#include <vector>

#include "planner/dataflow.h"
#include "proto/braid.pb.h"

namespace braid {

// OpenMP threads an op may use when it runs alone: OMP_NUM_THREADS (or the hardware threads), as
// the process started.
int ProcessIntraOpThreads();

// Hardware threads: the core tokens there are.
int HardwareThreads();

// Per op of `g`: k, the ops that may run at once with it (see the file comment). resource_of[i]:
// the serial resource op i runs on, or -1 when it has none of its own (the dag executor's workers).
std::vector<int> OpsAtOnce(const DataflowGraph& g, const std::vector<int>& resource_of,
                           int concurrency);

// Per op of `def`: its OpenMP threads, ProcessIntraOpThreads() / ops_at_once[i] (at least 1), or
// the net's intra_op_threads argument when set.
std::vector<int> IntraOpBudgets(const NetDef& def, const std::vector<int>& ops_at_once);

// Makes `threads` the calling thread's OpenMP team size (omp_set_num_threads, when it differs from
// what braid last set or read on this thread: code that calls omp_set_num_threads itself is seen
// at the next IntraOpThreads, which Net::Run calls on entry and each dag chain on its worker).
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

#endif  // BRAID_RUNTIME_EXEC_INTRA_OP_THREADS_H_
