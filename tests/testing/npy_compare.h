// ExpectNpyClose: a tool's saved output (.npy) against an independently computed one, elementwise:
// same shape, every value finite, and max |got - want| <= relative_tolerance * max |want|. Prints
// one line with both maxima and their ratio, so a test's log shows how close the outputs were.
//
//   ExpectNpyClose(work + "/out/prob.npy", fixture + "/output.npy", "small_cnn", 1e-4);
//
// float32 files only.
#ifndef BRAID_TESTS_TESTING_NPY_COMPARE_H_
#define BRAID_TESTS_TESTING_NPY_COMPARE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "runtime/io/npy_file.h"

namespace braid::testing {

inline void ExpectNpyClose(const std::string& got_npy, const std::string& want_npy,
                           const std::string& label, double relative_tolerance) {
  Tensor got, want;
  Status status = ReadNpyFile(got_npy, &got);
  ASSERT_TRUE(status.ok()) << label << ": " << status.ToString();
  status = ReadNpyFile(want_npy, &want);
  ASSERT_TRUE(status.ok()) << label << ": " << status.ToString();
  ASSERT_EQ(got.ShapeString(), want.ShapeString()) << label;
  double scale = 0, max_abs = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.data<float>()[i], g = got.data<float>()[i];
    ASSERT_TRUE(std::isfinite(g)) << label << " element " << i;
    scale = std::max(scale, std::fabs(w));
    max_abs = std::max(max_abs, std::fabs(g - w));
  }
  std::printf("%s: %lld values, max |got - expected| %.3g, max |expected| %.3g, relative %.3g\n",
              label.c_str(), static_cast<long long>(want.numel()), max_abs, scale,
              scale > 0 ? max_abs / scale : max_abs);
  EXPECT_LE(max_abs, relative_tolerance * scale) << label;
}

}  // namespace braid::testing

#endif  // BRAID_TESTS_TESTING_NPY_COMPARE_H_
