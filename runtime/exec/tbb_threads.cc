#include "runtime/exec/tbb_threads.h"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>

#include <memory>
#include <mutex>

namespace braid {

int AllowTbbThreads(int threads) {
  static std::mutex mu;
  // Never destroyed: arenas of detached threads may outlive static destruction.
  static auto* const control = new std::unique_ptr<oneapi::tbb::global_control>();
  static int allowed = oneapi::tbb::info::default_concurrency();  // guarded by mu
  std::lock_guard<std::mutex> lock(mu);
  if (threads > allowed) {
    // The new control exists before the old one goes, so the limit never drops in between.
    auto raised = std::make_unique<oneapi::tbb::global_control>(
        oneapi::tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
    control->swap(raised);
    allowed = threads;
  }
  return threads;
}

}  // namespace braid
