// Ops that exist only in tests, to observe and disturb executors:
//   TestSleep  (any inputs/outputs; arg `us`): sleeps, and records how many TestSleep ops ran at once.
//   TestFail   (any inputs/outputs): throws braid::Error("injected failure") while FailArmed().
//   TestEnforcedInplace (1 -> 1): its input and output must be the same blob.
//   TestCollective / TestLazy (any -> any): no-ops whose schemas say collective / allocates lazily.
//   TestScratch (any inputs/outputs; args `bytes`, `us`): fills `bytes` of its thread's scratch
//     area with its own mark, sleeps `us` microseconds, and throws if another op wrote over the
//     mark meanwhile; records the areas it was given (TestScratchAreas).
#ifndef BRAID_TESTS_TESTING_TEST_OPS_H_
#define BRAID_TESTS_TESTING_TEST_OPS_H_

#include <atomic>
#include <mutex>
#include <set>

namespace braid::testing {

struct SleepStats {
  std::atomic<int> running{0};
  std::atomic<int> max_running{0};
  void Reset() {
    running = 0;
    max_running = 0;
  }
};
SleepStats& TestSleepStats();
std::atomic<bool>& FailArmed();

struct ScratchAreasSeen {
  std::mutex mu;
  std::set<const void*> areas;  // guarded by mu: the ScratchArea objects TestScratch ran with
};
ScratchAreasSeen& TestScratchAreas();

}  // namespace braid::testing

#endif  // BRAID_TESTS_TESTING_TEST_OPS_H_
