// Concat, Split, Reshape, Flatten, ResizeLike and Dropout: values, shape inference against the
// kernels, in-place use, Dropout's determinism and test mode, and errors naming the blobs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ops/layers/layer_test_util.h"

namespace braid::test {
namespace {

TEST(ConcatTest, JoinsAlongAxisOneAndReportsSplitInfo) {
  Workspace ws;
  Feed<float>(&ws, "a", {2, 1}, {1, 2});
  Feed<float>(&ws, "b", {2, 2}, {3, 4, 5, 6});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Concat" input: "a" input: "b" output: "c" output: "info")"));
  EXPECT_EQ(ShapeOf(ws, "c"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Fetch<float>(ws, "c"), (std::vector<float>{1, 3, 4, 2, 5, 6}));
  EXPECT_EQ(Fetch<int32_t>(ws, "info"), (std::vector<int32_t>{1, 2}));
}

TEST(ConcatTest, AxisZeroAddAxisAndNHWCOrderOnIntegers) {
  Workspace ws;
  Feed<int64_t>(&ws, "a", {1, 2}, {1, 2});
  Feed<int64_t>(&ws, "b", {1, 2}, {3, 4});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Concat" input: "a" input: "b" output: "rows" output: "i0"
                            arg { name: "axis" i: 0 })"));
  EXPECT_EQ(ShapeOf(ws, "rows"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Fetch<int64_t>(ws, "rows"), (std::vector<int64_t>{1, 2, 3, 4}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Concat" input: "a" input: "b" output: "stack" output: "i1"
                            arg { name: "axis" i: 2 } arg { name: "add_axis" i: 1 })"));
  EXPECT_EQ(ShapeOf(ws, "stack"), (std::vector<int64_t>{1, 2, 2}));
  EXPECT_EQ(Fetch<int64_t>(ws, "stack"), (std::vector<int64_t>{1, 3, 2, 4}));
  EXPECT_EQ(Fetch<int32_t>(ws, "i1"), (std::vector<int32_t>{1, 1}));
  Feed<float>(&ws, "x", {1, 1, 1, 2}, {1, 2});
  Feed<float>(&ws, "y", {1, 1, 1, 1}, {3});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Concat" input: "x" input: "y" output: "nhwc" output: "i2"
                            arg { name: "order" s: "NHWC" })"));
  EXPECT_EQ(ShapeOf(ws, "nhwc"), (std::vector<int64_t>{1, 1, 1, 3}));
}

TEST(ConcatTest, MismatchedInputNamesBothBlobs) {
  Workspace ws;
  Feed<float>(&ws, "a", {2, 3}, std::vector<float>(6, 0));
  Feed<float>(&ws, "b", {3, 3}, std::vector<float>(9, 0));
  const std::string op = R"(type: "Concat" input: "a" input: "b" output: "c" output: "i")";
  const std::string error = RunOpError(&ws, op);
  EXPECT_TRUE(Contains(error, "input 'b' float32[3,3] does not fit input 'a' float32[2,3]"))
      << error;
  EXPECT_TRUE(Contains(InferError(ws, op), "input 'b' float32[3,3] does not fit"));
}

TEST(SplitTest, EqualSplitBySizesArgumentAndBySizesInput) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Split" input: "X" output: "a" output: "b")"));
  EXPECT_EQ(Fetch<float>(ws, "a"), (std::vector<float>{0, 1, 4, 5}));
  EXPECT_EQ(Fetch<float>(ws, "b"), (std::vector<float>{2, 3, 6, 7}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Split" input: "X" output: "c" output: "d"
                            arg { name: "split" ints: 1 ints: 3 })"));
  EXPECT_EQ(ShapeOf(ws, "c"), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Fetch<float>(ws, "d"), (std::vector<float>{1, 2, 3, 5, 6, 7}));
  Feed<int32_t>(&ws, "sizes", {2}, {3, 1});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Split" input: "X" input: "sizes" output: "e" output: "f")",
                    /*allow_unknown=*/true));
  EXPECT_EQ(ShapeOf(ws, "e"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Fetch<float>(ws, "f"), (std::vector<float>{3, 7}));
}

TEST(SplitTest, AddAxisRemovesTheDimAndUndoesConcat) {
  Workspace ws;
  Feed<float>(&ws, "a", {2, 2}, {1, 2, 3, 4});
  Feed<float>(&ws, "b", {2, 2}, {5, 6, 7, 8});
  const std::string args = R"(arg { name: "axis" i: 1 } arg { name: "add_axis" i: 1 })";
  ASSERT_TRUE(
      RunOp(&ws, R"(type: "Concat" input: "a" input: "b" output: "c" output: "i" )" + args));
  EXPECT_EQ(ShapeOf(ws, "c"), (std::vector<int64_t>{2, 2, 2}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Split" input: "c" output: "a2" output: "b2" )" + args));
  EXPECT_EQ(ShapeOf(ws, "a2"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Fetch<float>(ws, "a2"), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(Fetch<float>(ws, "b2"), (std::vector<float>{5, 6, 7, 8}));
}

TEST(SplitTest, ErrorsNameTheInputAndTheSizes) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 5}, std::vector<float>(10, 0));
  Feed<int32_t>(&ws, "sizes", {2}, {2, 3});
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "Split" input: "X" output: "a" output: "b")"),
                       "input 'X' float32[2,5] has 5 along the split axis, which 2 outputs"));
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "Split" input: "X" output: "a" output: "b"
                                          arg { name: "split" ints: 2 ints: 2 })"),
                       "split sizes [2,2] do not cut input 'X' float32[2,5] along axis 1"));
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "Split" input: "X" input: "sizes" output: "a"
                                          output: "b" arg { name: "split" ints: 2 ints: 3 })"),
                       "input 'sizes' or as the `split` argument, not both"));
}

TEST(ReshapeTest, ZeroCopiesADimAndMinusOneIsInferred) {
  Workspace ws;
  const std::vector<float> x = RandomFloats(1, 24);
  Feed<float>(&ws, "X", {2, 3, 4}, x);
  ASSERT_TRUE(RunOp(&ws, R"(type: "Reshape" input: "X" output: "Y" output: "old"
                            arg { name: "shape" ints: 0 ints: -1 })"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(Fetch<float>(ws, "Y"), x);
  EXPECT_EQ(Fetch<int64_t>(ws, "old"), (std::vector<int64_t>{2, 3, 4}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Reshape" input: "X" output: "Z" output: "old"
                            arg { name: "shape" ints: 4 ints: -1 ints: 2 })"));
  EXPECT_EQ(ShapeOf(ws, "Z"), (std::vector<int64_t>{4, 3, 2}));
}

TEST(ReshapeTest, NewShapeInputAndInPlaceBackToOldShape) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, {1, 2, 3, 4, 5, 6});
  Feed<int64_t>(&ws, "new_shape", {1}, {-1});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Reshape" input: "X" input: "new_shape" output: "X"
                            output: "old")",
                    /*allow_unknown=*/true));
  EXPECT_EQ(ShapeOf(ws, "X"), (std::vector<int64_t>{6}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Reshape" input: "X" input: "old" output: "X" output: "old2")",
                    /*allow_unknown=*/true));
  EXPECT_EQ(ShapeOf(ws, "X"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Fetch<float>(ws, "X"), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(ReshapeTest, BadShapesNameTheInput) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, std::vector<float>(6, 0));
  Feed<int64_t>(&ws, "s", {1}, {6});
  auto error = [&](const std::string& args) {
    return RunOpError(&ws, R"(type: "Reshape" input: "X" output: "Y" output: "o" )" + args);
  };
  EXPECT_TRUE(Contains(error(R"(arg { name: "shape" ints: -1 ints: -1 })"),
                       "cannot reshape input 'X' float32[2,3] to [-1,-1]: more than one -1"));
  EXPECT_TRUE(Contains(error(R"(arg { name: "shape" ints: 4 ints: -1 })"),
                       "the -1 dim cannot be inferred"));
  EXPECT_TRUE(
      Contains(error(R"(arg { name: "shape" ints: 5 })"), "element counts differ (6 vs 5)"));
  EXPECT_TRUE(Contains(error(R"(arg { name: "shape" ints: 0 ints: 0 ints: 0 })"),
                       "0 past the input's last dim"));
  EXPECT_TRUE(Contains(error(""), "Reshape needs the `shape` argument or a new_shape input"));
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "Reshape" input: "X" input: "s" output: "Y"
                                          output: "o" arg { name: "shape" ints: 6 })"),
                       "not both"));
  EXPECT_TRUE(Contains(InferError(ws, R"(type: "Reshape" input: "X" output: "Y" output: "o"
                                         arg { name: "shape" ints: 7 })"),
                       "'X' float32[2,3]"));
}

TEST(FlattenTest, SplitsAtAxisIncludingTheEnd) {
  Workspace ws;
  const std::vector<float> x = RandomFloats(2, 24);
  Feed<float>(&ws, "X", {2, 3, 4}, x);
  ASSERT_TRUE(RunOp(&ws, R"(type: "Flatten" input: "X" output: "Y")"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{2, 12}));
  EXPECT_EQ(Fetch<float>(ws, "Y"), x);
  ASSERT_TRUE(RunOp(&ws, R"(type: "Flatten" input: "X" output: "Z" arg { name: "axis" i: 3 })"));
  EXPECT_EQ(ShapeOf(ws, "Z"), (std::vector<int64_t>{24, 1}));
}

TEST(ResizeLikeTest, TakesTheOtherShapeAndRejectsADifferentCount) {
  Workspace ws;
  Feed<float>(&ws, "X", {6}, {1, 2, 3, 4, 5, 6});
  Feed<float>(&ws, "like", {3, 2}, std::vector<float>(6, 0));
  Feed<float>(&ws, "small", {5}, std::vector<float>(5, 0));
  ASSERT_TRUE(RunOp(&ws, R"(type: "ResizeLike" input: "X" input: "like" output: "Y")"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(
      Contains(RunOpError(&ws, R"(type: "ResizeLike" input: "X" input: "small" output: "Y")"),
               "input 'X' float32[6] cannot take the shape of 'small' float32[5]"));
}

const char kDropout[] = R"(type: "Dropout" input: "X" output: "Y" output: "mask"
                           arg { name: "ratio" f: 0.25 } )";

TEST(DropoutTest, KeepsScaledValuesWhereTheMaskIsSet) {
  Workspace ws;
  const std::vector<float> x = RandomFloats(3, 4000, 0.5f, 1.f);
  Feed<float>(&ws, "X", {40, 100}, x);
  ASSERT_TRUE(RunOp(&ws, kDropout));
  const std::vector<float> y = Fetch<float>(ws, "Y");
  const std::vector<bool> mask = Fetch<bool>(ws, "mask");
  int kept = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    kept += mask[i];
    EXPECT_EQ(y[i], mask[i] ? x[i] * (1 / 0.75f) : 0.f) << i;
  }
  EXPECT_NEAR(kept / 4000.0, 0.75, 0.03);  // ~4.4 standard deviations
}

TEST(DropoutTest, SameSeedSameMaskOtherSeedOtherMask) {
  auto mask_of = [](const std::string& seed_arg) {
    Workspace ws;
    FeedRandom(&ws, "X", {64}, 4);
    EXPECT_TRUE(RunOp(&ws, std::string(kDropout) + seed_arg));
    return Fetch<bool>(ws, "mask");
  };
  const std::string seed7 = R"(arg { name: "seed" i: 7 })";
  EXPECT_EQ(mask_of(seed7), mask_of(seed7));
  EXPECT_NE(mask_of(seed7), mask_of(R"(arg { name: "seed" i: 8 })"));
  EXPECT_EQ(mask_of(""), mask_of(""));  // seeded from the output name
}

TEST(DropoutTest, TestModeIsIdentityEvenInPlace) {
  Workspace ws;
  Feed<float>(&ws, "X", {3}, {1, -2, 3});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Dropout" input: "X" output: "Y"
                            arg { name: "is_test" i: 1 } arg { name: "ratio" f: 0.9 })"));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{1, -2, 3}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Dropout" input: "X" output: "X" output: "m"
                            arg { name: "is_test" i: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "X"), (std::vector<float>{1, -2, 3}));
  EXPECT_EQ(Fetch<bool>(ws, "m"), (std::vector<bool>{true, true, true}));
}

TEST(DropoutTest, RatioZeroKeepsAllRatioOneDropsAllInPlace) {
  Workspace ws;
  Feed<float>(&ws, "X", {4}, {1, 2, 3, 4});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Dropout" input: "X" output: "X" output: "m"
                            arg { name: "ratio" f: 0 })"));
  EXPECT_EQ(Fetch<float>(ws, "X"), (std::vector<float>{1, 2, 3, 4}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Dropout" input: "X" output: "X" output: "m"
                            arg { name: "ratio" f: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "X"), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(Fetch<bool>(ws, "m"), (std::vector<bool>{false, false, false, false}));
}

TEST(DropoutTest, TrainingWithoutMaskOrBadRatioIsAnError) {
  Workspace ws;
  Feed<float>(&ws, "X", {2}, {1, 2});
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "Dropout" input: "X" output: "Y")"),
                       "Dropout with is_test = 0 needs the mask output"));
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "Dropout" input: "X" output: "Y" output: "m"
                                          arg { name: "ratio" f: 1.5 })"),
                       "argument 'ratio' must be in [0, 1]"));
}

TEST(DropoutGradTest, MasksAndScalesDYOrPassesItInTestMode) {
  Workspace ws;
  Feed<float>(&ws, "dY", {3}, {1, 2, 3});
  Feed<bool>(&ws, "mask", {3}, {true, false, true});
  ASSERT_TRUE(RunOp(&ws, R"(type: "DropoutGrad" input: "dY" input: "mask" output: "dX"
                            arg { name: "ratio" f: 0.5 })"));
  EXPECT_EQ(Fetch<float>(ws, "dX"), (std::vector<float>{2, 0, 6}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "DropoutGrad" input: "dY" output: "dY"
                            arg { name: "is_test" i: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "dY"), (std::vector<float>{1, 2, 3}));
}

}  // namespace
}  // namespace braid::test
