// Small helpers shared by the tests of ops/activation, ops/loss, ops/tensor, ops/train and the
// initialising fills: substring checks on error messages, approximate vector comparison and
// seeded random inputs (the seed is part of each test, so failures reproduce).
#ifndef BRAID_TESTS_OPS_LAYERS_LAYER_TEST_UTIL_H_
#define BRAID_TESTS_OPS_LAYERS_LAYER_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ops/op_test_util.h"

namespace braid::test {

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

inline void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected,
                       float tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
  }
}

// n values uniform in [lo, hi) from `seed`.
inline std::vector<float> RandomFloats(uint64_t seed, size_t n, float lo = -1.f, float hi = 1.f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(lo, hi);
  std::vector<float> values(n);
  for (float& v : values) v = uniform(rng);
  return values;
}

inline void FeedRandom(Workspace* ws, const std::string& name, std::vector<int64_t> dims,
                       uint64_t seed, float lo = -1.f, float hi = 1.f) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  Feed<float>(ws, name, std::move(dims), RandomFloats(seed, static_cast<size_t>(n), lo, hi));
}

}  // namespace braid::test

#endif  // BRAID_TESTS_OPS_LAYERS_LAYER_TEST_UTIL_H_
