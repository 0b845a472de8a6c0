// Ops that exist only in tests, to observe and disturb executors:
//   TestSleep  (any inputs/outputs; arg `us`): sleeps, and records how many TestSleep ops ran at once.
//   TestFail   (any inputs/outputs): throws braid::Error("injected failure") while FailArmed().
//   TestEnforcedInplace (1 -> 1): its input and output must be the same blob.
//   TestCollective / TestLazy (any -> any): no-ops whose schemas say collective / allocates lazily.
#ifndef BRAID_TESTS_TESTING_TEST_OPS_H_
#define BRAID_TESTS_TESTING_TEST_OPS_H_

#include <atomic>

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

}  // namespace braid::testing

#endif  // BRAID_TESTS_TESTING_TEST_OPS_H_
