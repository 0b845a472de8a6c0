// Ops that exist only in tests, to observe and disturb executors:
//   TestSleep  (any inputs/outputs; arg `us`): sleeps, and records how many TestSleep ops ran at once
//     and how many OpenMP threads their teams (IntraOpThreads) came to at most.
//   TestFail   (any inputs/outputs): throws braid::Error("injected failure") while FailArmed().
//   TestEnforcedInplace (1 -> 1): its input and output must be the same blob.
//   TestCollective / TestLazy (any -> any): no-ops whose schemas say collective / allocates lazily.
//   TestScratch (any inputs/outputs; args `bytes`, `us`): fills `bytes` of its thread's scratch
//     area with its own mark, sleeps `us` microseconds, and throws if another op wrote over the
//     mark meanwhile; records the areas it was given (TestScratchAreas).
//   TestDelayedCopy (1 -> 1; arg `us`): sleeps, then Y = X (float32): a slow producer, so that a
//     consumer that does not wait for it reads stale data.
//   TestDeviceBlock (any -> none): on a sim device, blocks in SimDevice::WaitInKernel until
//     DeviceBlockGate() is opened (the watchdog's case); elsewhere a no-op.
// And ThrowingObserver, a net observer that throws once (what no op catches).
#ifndef BRAID_TESTS_TESTING_TEST_OPS_H_
#define BRAID_TESTS_TESTING_TEST_OPS_H_

#include <atomic>
#include <condition_variable>
#include <stdexcept>
#include <string>
#include <mutex>
#include <set>
#include <vector>

#include "runtime/exec/observer.h"

namespace braid::testing {

struct SleepStats {
  std::atomic<int> running{0};
  std::atomic<int> max_running{0};
  std::atomic<int> threads{0};      // the running ops' teams, summed
  std::atomic<int> max_threads{0};
  void Reset() {
    running = 0;
    max_running = 0;
    threads = 0;
    max_threads = 0;
  }
};
SleepStats& TestSleepStats();
std::atomic<bool>& FailArmed();

struct ScratchAreasSeen {
  std::mutex mu;
  std::set<const void*> areas;  // guarded by mu: the ScratchArea objects TestScratch ran with
};
ScratchAreasSeen& TestScratchAreas();

// The gate TestDeviceBlock kernels wait at: Open() releases them, Close() makes later ones block.
class Gate {
 public:
  void Open();
  void Close();
  bool is_open();
  // Blocks a sim kernel until the gate opens (SimDevice::WaitInKernel: the watchdog may abort it).
  void WaitInSimKernel(const std::string& what);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;  // guarded by mu_
};
Gate& DeviceBlockGate();

// Throws std::runtime_error once: when op `op` starts ("observer"), or when the Run ends
// ("observer at the end").
class ThrowingObserver final : public NetObserver {
 public:
  ThrowingObserver(int op, bool at_run_end) : op_(op), at_run_end_(at_run_end) {}
  void OnOpStart(const Net&, int op) override {
    if (!at_run_end_ && op == op_ && armed_.exchange(false)) throw std::runtime_error("observer");
  }
  void OnRunEnd(const Net&, const std::vector<OpEvent>&) override {
    if (at_run_end_ && armed_.exchange(false)) throw std::runtime_error("observer at the end");
  }

 private:
  const int op_;
  const bool at_run_end_;
  std::atomic<bool> armed_{true};
};

}  // namespace braid::testing

#endif  // BRAID_TESTS_TESTING_TEST_OPS_H_
