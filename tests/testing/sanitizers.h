// Test helper: whether the tests run under ThreadSanitizer, for tests that race on purpose (the
// mutation checks that drop a wait: under TSan their race is reported as such and ends the run).
#ifndef BRAID_TESTS_TESTING_SANITIZERS_H_
#define BRAID_TESTS_TESTING_SANITIZERS_H_

namespace braid::testing {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif

}  // namespace braid::testing

#endif  // BRAID_TESTS_TESTING_SANITIZERS_H_
