// IntraOpThreads: how many OpenMP threads each op may use while a dag net runs its ops in parallel.
//
// Kernels parallelise inside an op on OpenMP (oneDNN, OpenBLAS and the elementwise ops all run on
// libgomp). When the dag executor runs W ops at once, each op's OpenMP team would otherwise take
// every core, W teams would spin against each other, and throughput collapses (measured: data-
// parallel ResNet-20 on 2 devices, 2 workers x 2 OpenMP threads on 2 cores ran ~10x slower than the
// simple executor). This observer gives every thread of a DagNet's task_arena an OpenMP budget of
// max(1, hardware threads / W), never more than the thread's own setting (OMP_NUM_THREADS), while it
// works in the arena, and restores that setting when it leaves. The net argument intra_op_threads
// overrides the budget.
//
//   IntraOpThreads budget(&arena, /*threads_per_op=*/1);   // observes while it lives
//
// Thread safety: on_scheduler_entry/exit run on the entering or leaving thread and touch only that
// thread's OpenMP settings (thread-local).
#ifndef BRAID_RUNTIME_INTRA_OP_THREADS_H_
#define BRAID_RUNTIME_INTRA_OP_THREADS_H_

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_scheduler_observer.h>

#include "proto/braid.pb.h"

namespace braid {

class IntraOpThreads : public tbb::task_scheduler_observer {
 public:
  IntraOpThreads(tbb::task_arena* arena, int threads_per_op);
  ~IntraOpThreads() override;

  void on_scheduler_entry(bool is_worker) override;
  void on_scheduler_exit(bool is_worker) override;

 private:
  int threads_per_op_;
};

// The budget for `def` run by `workers` workers: its intra_op_threads argument, else
// max(1, hardware threads / workers).
int IntraOpThreadsFor(const NetDef& def, int workers);

}  // namespace braid

#endif  // BRAID_RUNTIME_INTRA_OP_THREADS_H_
