// oneTBB's thread limit. By default oneTBB runs no more threads than the machine has hardware
// threads, whatever an arena asks for (it prints "The number of workers is currently limited to
// ..." and ignores the rest), so a dag net's num_workers above the core count was silently capped.
// braid honours the net's number: nets on devices want more workers than cores (they mostly wait
// on launches and events), and the stress tests' schedules need the concurrency they name.
//
// AllowTbbThreads(n) raises the process's limit to at least n threads (a tbb::global_control of
// max_allowed_parallelism, held for the rest of the process); it never lowers it, and an
// application's own, lower global_control still wins (oneTBB applies the smallest).
//
//   tbb::task_arena arena(AllowTbbThreads(NumWorkers(def)));
//
// Thread-safe: a mutex guards the control.
#ifndef BRAID_RUNTIME_EXEC_TBB_THREADS_H_
#define BRAID_RUNTIME_EXEC_TBB_THREADS_H_

namespace braid {

// Returns `threads`, once oneTBB may run that many at once.
int AllowTbbThreads(int threads);

}  // namespace braid

#endif  // BRAID_RUNTIME_EXEC_TBB_THREADS_H_
