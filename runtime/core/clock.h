// When and on which thread: the steady clock in nanoseconds and a small index for the calling
// thread, for observers (runtime/exec/observer.h), the sim devices' watchdog and the benchmarks. No
// braid header below it: every room may include it.
//
//   const int64_t start = NowNanos();
//   ...
//   event.end_ns = NowNanos();  event.thread = CurrentThreadIndex();
//
// Thread safety: both may be called from any thread.
#ifndef BRAID_RUNTIME_CORE_CLOCK_H_
#define BRAID_RUNTIME_CORE_CLOCK_H_

#include <cstdint>

namespace braid {

// Nanoseconds on the steady clock.
int64_t NowNanos();
// A small integer for the calling thread, stable for the thread's life (0, 1, 2, ...).
int CurrentThreadIndex();

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_CLOCK_H_
