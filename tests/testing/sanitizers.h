// Test helper: whether the tests run under ThreadSanitizer, for tests that race on purpose (the
// mutation checks that drop a wait: under TSan their race is reported as such and ends the run),
// and under a sanitizer's allocator.
#ifndef BRAID_TESTS_TESTING_SANITIZERS_H_
#define BRAID_TESTS_TESTING_SANITIZERS_H_

namespace braid::testing {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif

// Any sanitizer whose allocator aborts on an impossible request (ASan's and TSan's do, unless
// allocator_may_return_null=1): tests of what braid does when malloc returns null skip there.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitizerAllocator = true;
#else
inline constexpr bool kSanitizerAllocator = false;
#endif

}  // namespace braid::testing

#endif  // BRAID_TESTS_TESTING_SANITIZERS_H_
