// Transpose, NCHW2NHWC and NHWC2NCHW: every permutation of a 4-D tensor (and of shapes with size-1
// dims, which the kernel merges away) against a naive index loop, every element size, the layout
// ops against Transpose, errors, and gradients against finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "runtime/core/gradient.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string AxesArg(const std::vector<int>& axes) {
  std::string arg = R"( arg { name: "axes")";
  for (int a : axes) arg += " ints: " + std::to_string(a);
  return arg + " }";
}

// Y[i] for Y = X permuted by `perm`, by decomposing each of Y's indices: the reference.
template <typename T>
std::vector<T> NaiveTranspose(const std::vector<T>& x, const std::vector<int64_t>& dims,
                              const std::vector<int>& perm) {
  const size_t n = dims.size();
  std::vector<int64_t> x_strides(n, 1), y_dims(n);
  for (size_t d = n - 1; d-- > 0;) x_strides[d] = x_strides[d + 1] * dims[d + 1];
  for (size_t d = 0; d < n; ++d) y_dims[d] = dims[perm[d]];
  std::vector<T> y(x.size());
  for (size_t i = 0; i < y.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), x_index = 0;
    for (size_t d = n; d-- > 0;) {
      x_index += (rest % y_dims[d]) * x_strides[perm[d]];
      rest /= y_dims[d];
    }
    y[i] = x[x_index];
  }
  return y;
}

template <typename T>
void CheckAllPermutations(const std::vector<int64_t>& dims) {
  Workspace ws;
  const int64_t numel = std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
  std::vector<T> x(numel);
  for (int64_t i = 0; i < numel; ++i) x[i] = static_cast<T>(i % 120);
  Feed<T>(&ws, "X", dims, x);
  std::vector<int> perm(dims.size());
  std::iota(perm.begin(), perm.end(), 0);
  do {
    const std::string op = R"(type: "Transpose" input: "X" output: "Y")" + AxesArg(perm);
    ASSERT_TRUE(RunOp(&ws, op)) << op;
    EXPECT_EQ(Fetch<T>(ws, "Y"), NaiveTranspose(x, dims, perm)) << op;
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST(TransposeTest, EveryPermutationMatchesANaiveLoop) {
  CheckAllPermutations<float>({2, 3, 4, 5});
  CheckAllPermutations<float>({2, 1, 3, 1, 4});   // size-1 dims merged away
  CheckAllPermutations<int64_t>({3, 1, 40, 33});  // 8-byte elements, more than one tile
  CheckAllPermutations<uint8_t>({1, 2, 35, 3});   // 1-byte elements
  CheckAllPermutations<float>({2, 0, 3});         // no elements
}

TEST(TransposeTest, DefaultReversesTheDims) {
  Workspace ws;
  Feed<int32_t>(&ws, "X", {2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Transpose" input: "X" output: "Y")"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Fetch<int32_t>(ws, "Y"), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
}

TEST(TransposeTest, RefusesAxesThatAreNoPermutation) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3, 4}, std::vector<float>(24, 0));
  for (const std::vector<int>& axes :
       std::vector<std::vector<int>>{{0, 1}, {0, 1, 1}, {0, 1, 3}, {-1, 0, 1}}) {
    const std::string op = R"(type: "Transpose" input: "X" output: "Y")" + AxesArg(axes);
    EXPECT_TRUE(Contains(InferError(ws, op), "is not a permutation of the 3 dims of input 'X'"))
        << op;
    EXPECT_TRUE(Contains(RunOpError(&ws, op), "float32[2,3,4]")) << op;
  }
}

TEST(TransposeGradientTest, InversePermutationMatchesFiniteDifferences) {
  const OperatorDef op =
      ParseOp(R"(type: "Transpose" input: "X" output: "Y")" + AxesArg({1, 2, 0}));
  const GradientOps back = (*FindGradientMaker("Transpose"))(GradientRequest{op, {"dY"}, {"dX"}});
  ASSERT_EQ(back.ops.size(), 1u);
  const auto& inverse = back.ops[0].arg(0).ints();
  EXPECT_EQ(std::vector<int64_t>(inverse.begin(), inverse.end()), (std::vector<int64_t>{2, 0, 1}));
  Workspace ws;
  std::vector<float> x(24);
  for (int i = 0; i < 24; ++i) x[i] = 0.1f * i - 1;
  Feed<float>(&ws, "X", {2, 3, 4}, x);
  EXPECT_TRUE(CheckGradient(op, &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Transpose" input: "X" output: "Y")"), &ws));
}

TEST(LayoutTransposeTest, MatchTransposeAndInvertEachOther) {
  Workspace ws;
  std::vector<float> x(2 * 3 * 4 * 5);
  std::iota(x.begin(), x.end(), 0.f);
  Feed<float>(&ws, "X", {2, 3, 4, 5}, x);
  ASSERT_TRUE(RunOp(&ws, R"(type: "NCHW2NHWC" input: "X" output: "nhwc")"));
  EXPECT_EQ(ShapeOf(ws, "nhwc"), (std::vector<int64_t>{2, 4, 5, 3}));
  EXPECT_EQ(Fetch<float>(ws, "nhwc"), NaiveTranspose(x, {2, 3, 4, 5}, {0, 2, 3, 1}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "NHWC2NCHW" input: "nhwc" output: "back")"));
  EXPECT_EQ(ShapeOf(ws, "back"), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(Fetch<float>(ws, "back"), x);
  Feed<float>(&ws, "X3", {2, 3, 4}, std::vector<float>(x.begin(), x.begin() + 24));
  ASSERT_TRUE(RunOp(&ws, R"(type: "NHWC2NCHW" input: "X3" output: "ncw")"));
  EXPECT_EQ(ShapeOf(ws, "ncw"), (std::vector<int64_t>{2, 4, 3}));
  Feed<float>(&ws, "X2", {2, 3}, std::vector<float>(6, 0));
  EXPECT_TRUE(Contains(InferError(ws, R"(type: "NCHW2NHWC" input: "X2" output: "Y")"),
                       "input 'X2' float32[2,3] must have at least 3 dims"));
}

TEST(LayoutTransposeGradientTest, AreEachOtherAndMatchFiniteDifferences) {
  Workspace ws;
  std::vector<float> x(2 * 3 * 2 * 2);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.05f * static_cast<float>(i);
  Feed<float>(&ws, "X", {2, 3, 2, 2}, x);
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "NCHW2NHWC" input: "X" output: "Y")"), &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "NHWC2NCHW" input: "X" output: "Y")"), &ws));
}

}  // namespace
}  // namespace braid::test
