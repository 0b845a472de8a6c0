#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ops/op_test_util.h"

namespace braid::test {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(MathOpsTest, CopyCopiesTypeShapeAndValues) {
  Workspace ws;
  Feed<int64_t>(&ws, "X", {2, 2}, {1, -2, 3, 1LL << 40});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Copy" input: "X" output: "Y")"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Fetch<int64_t>(ws, "Y"), (std::vector<int64_t>{1, -2, 3, 1LL << 40}));
  ws.GetBlob("X")->mutable_data<int64_t>()[0] = 99;  // a copy, not shared storage
  EXPECT_EQ(Fetch<int64_t>(ws, "Y")[0], 1);
}

TEST(MathOpsTest, CopyNamesAnInputThatWasNeverWritten) {
  Workspace ws;
  ws.CreateBlob("empty")->Resize(DType::kFloat32, {3});
  std::string error = RunOpError(&ws, R"(type: "Copy" input: "empty" output: "Y")");
  EXPECT_TRUE(Contains(error, "'empty' float32[3] has no data")) << error;
}

TEST(MathOpsTest, SumAddsThreeInputs) {
  Workspace ws;
  Feed<float>(&ws, "a", {2, 2}, {1, 2, 3, 4});
  Feed<float>(&ws, "b", {2, 2}, {10, 20, 30, 40});
  Feed<float>(&ws, "c", {2, 2}, {0.5, -2, 0, -44});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Sum" input: "a" input: "b" input: "c" output: "s")"));
  EXPECT_EQ(ShapeOf(ws, "s"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Fetch<float>(ws, "s"), (std::vector<float>{11.5, 20, 33, 0}));
}

TEST(MathOpsTest, SumOneInputIsACopy) {
  Workspace ws;
  Feed<float>(&ws, "a", {3}, {1, 2, 3});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Sum" input: "a" output: "s")"));
  EXPECT_EQ(Fetch<float>(ws, "s"), (std::vector<float>{1, 2, 3}));
}

TEST(MathOpsTest, SumAccumulatesInPlaceIntoTheFirstInput) {
  Workspace ws;
  Feed<float>(&ws, "acc", {3}, {1, 2, 3});
  Feed<float>(&ws, "g", {3}, {0.5, 0.25, -3});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Sum" input: "acc" input: "g" output: "acc")"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Sum" input: "acc" input: "g" output: "acc")"));
  EXPECT_EQ(Fetch<float>(ws, "acc"), (std::vector<float>{2, 2.5, -3}));
}

TEST(MathOpsTest, SumAddsIntegers) {
  Workspace ws;
  Feed<int32_t>(&ws, "a", {3}, {1, -2, 3});
  Feed<int32_t>(&ws, "b", {3}, {7, 7, 7});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Sum" input: "a" input: "b" output: "s")"));
  EXPECT_EQ(Fetch<int32_t>(ws, "s"), (std::vector<int32_t>{8, 5, 10}));
}

TEST(MathOpsTest, SumShapeMismatchNamesBothBlobs) {
  Workspace ws;
  Feed<float>(&ws, "a", {2, 3}, std::vector<float>(6, 1.f));
  Feed<float>(&ws, "b", {3, 2}, std::vector<float>(6, 1.f));
  const std::string op = R"(type: "Sum" input: "a" input: "b" output: "s")";
  std::string error = RunOpError(&ws, op);
  EXPECT_TRUE(Contains(error, "net 'test' op #0 (Sum")) << error;
  EXPECT_TRUE(Contains(error, "'b' float32[3,2]")) << error;
  EXPECT_TRUE(Contains(error, "'a' float32[2,3]")) << error;
  EXPECT_TRUE(Contains(InferError(ws, op), "'b' float32[3,2]"));
}

TEST(MathOpsTest, SumTypeMismatchNamesTheBlob) {
  Workspace ws;
  Feed<float>(&ws, "a", {2}, {1, 2});
  Feed<int32_t>(&ws, "b", {2}, {1, 2});
  std::string error = RunOpError(&ws, R"(type: "Sum" input: "a" input: "b" output: "s")");
  EXPECT_TRUE(Contains(error, "'b' int32[2] must be float32")) << error;
}

TEST(MathOpsTest, AddAddsEqualShapes) {
  Workspace ws;
  Feed<float>(&ws, "A", {2, 2}, {1, 2, 3, 4});
  Feed<float>(&ws, "B", {2, 2}, {0.5, -2, 10, -4});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Add" input: "A" input: "B" output: "C")"));
  EXPECT_EQ(Fetch<float>(ws, "C"), (std::vector<float>{1.5, 0, 13, 0}));
}

TEST(MathOpsTest, AddWritesInPlaceIntoEitherInput) {
  Workspace ws;
  Feed<float>(&ws, "A", {3}, {1, 2, 3});
  Feed<float>(&ws, "B", {3}, {10, 20, 30});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Add" input: "A" input: "B" output: "A")"));
  EXPECT_EQ(Fetch<float>(ws, "A"), (std::vector<float>{11, 22, 33}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Add" input: "A" input: "B" output: "B")"));
  EXPECT_EQ(Fetch<float>(ws, "B"), (std::vector<float>{21, 42, 63}));
}

TEST(MathOpsTest, AddBroadcastsBOverAsTrailingDims) {
  Workspace ws;
  Feed<float>(&ws, "A", {2, 3}, {0, 1, 2, 3, 4, 5});
  Feed<float>(&ws, "B", {3}, {100, 200, 300});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Add" input: "A" input: "B" output: "C"
      arg { name: "broadcast" i: 1 })"));
  EXPECT_EQ(ShapeOf(ws, "C"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Fetch<float>(ws, "C"), (std::vector<float>{100, 201, 302, 103, 204, 305}));
}

TEST(MathOpsTest, AddBroadcastsAScalar) {
  Workspace ws;
  Feed<int64_t>(&ws, "A", {2, 2}, {1, 2, 3, 4});
  Feed<int64_t>(&ws, "B", {}, {-1});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Add" input: "A" input: "B" output: "A"
      arg { name: "broadcast" i: 1 })"));
  EXPECT_EQ(Fetch<int64_t>(ws, "A"), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(MathOpsTest, AddShapeMismatchNamesBothBlobsAndShapes) {
  Workspace ws;
  Feed<float>(&ws, "A", {2, 3}, std::vector<float>(6, 1.f));
  Feed<float>(&ws, "B", {3, 2}, std::vector<float>(6, 1.f));
  const std::string op = R"(type: "Add" name: "add1" input: "A" input: "B" output: "C")";
  std::string error = RunOpError(&ws, op);
  EXPECT_TRUE(Contains(error, "net 'test' op #0 (Add 'add1')")) << error;
  EXPECT_TRUE(Contains(error, "'A' float32[2,3] and 'B' float32[3,2]")) << error;
  EXPECT_TRUE(Contains(InferError(ws, op), "'A' float32[2,3] and 'B' float32[3,2]"));
}

TEST(MathOpsTest, AddBroadcastMismatchNamesBothBlobs) {
  Workspace ws;
  Feed<float>(&ws, "A", {2, 3}, std::vector<float>(6, 1.f));
  Feed<float>(&ws, "B", {2}, {1, 1});
  std::string error = RunOpError(&ws, R"(type: "Add" input: "A" input: "B" output: "C"
      arg { name: "broadcast" i: 1 })");
  EXPECT_TRUE(Contains(error, "'A' float32[2,3] and 'B' float32[2] cannot broadcast")) << error;
}

TEST(MathOpsTest, AddRefusesToOverwriteASmallerBInPlace) {
  Workspace ws;
  Feed<float>(&ws, "A", {2, 3}, std::vector<float>(6, 1.f));
  Feed<float>(&ws, "B", {3}, {1, 1, 1});
  const std::string op = R"(type: "Add" input: "A" input: "B" output: "B"
      arg { name: "broadcast" i: 1 })";
  EXPECT_TRUE(Contains(RunOpError(&ws, op), "in place of the smaller B"));
  EXPECT_TRUE(Contains(InferError(ws, op), "in place of the smaller B"));
  EXPECT_EQ(Fetch<float>(ws, "B"), (std::vector<float>{1, 1, 1}));
}

TEST(MathOpsTest, AddTypeMismatchNamesTheBlob) {
  Workspace ws;
  Feed<float>(&ws, "A", {2}, {1, 2});
  Feed<int64_t>(&ws, "B", {2}, {1, 2});
  std::string error = RunOpError(&ws, R"(type: "Add" input: "A" input: "B" output: "C")");
  EXPECT_TRUE(Contains(error, "input 'B' int64[2] must be float32")) << error;
}

TEST(MathOpsTest, MulMultipliesEqualShapes) {
  Workspace ws;
  Feed<float>(&ws, "A", {4}, {1, -2, 3, 0.5});
  Feed<float>(&ws, "B", {4}, {2, 3, -1, 8});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Mul" input: "A" input: "B" output: "C")"));
  EXPECT_EQ(Fetch<float>(ws, "C"), (std::vector<float>{2, -6, -3, 4}));
}

TEST(MathOpsTest, MulBroadcastsAlongAxis) {
  Workspace ws;
  std::vector<float> a(2 * 3 * 2);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
  Feed<float>(&ws, "A", {2, 3, 2}, a);
  Feed<float>(&ws, "B", {3}, {1, 10, 100});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Mul" input: "A" input: "B" output: "C"
      arg { name: "broadcast" i: 1 } arg { name: "axis" i: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "C"),
            (std::vector<float>{0, 1, 20, 30, 400, 500, 6, 7, 80, 90, 1000, 1100}));
}

TEST(MathOpsTest, MulMultipliesInt32InPlace) {
  Workspace ws;
  Feed<int32_t>(&ws, "A", {3}, {2, -3, 4});
  Feed<int32_t>(&ws, "B", {3}, {5, 6, -7});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Mul" input: "A" input: "B" output: "A")"));
  EXPECT_EQ(Fetch<int32_t>(ws, "A"), (std::vector<int32_t>{10, -18, -28}));
}

TEST(MathOpsTest, ReluClampsNegativesToZero) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, {-1.5, 0, 2, -0.0001f, 7, -100});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Relu" input: "X" output: "Y")"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{0, 0, 2, 0, 7, 0}));
  EXPECT_EQ(Fetch<float>(ws, "X")[0], -1.5f);
}

TEST(MathOpsTest, ReluRunsInPlace) {
  Workspace ws;
  Feed<float>(&ws, "X", {4}, {-1, 1, -2, 2});
  const void* before = ws.GetBlob("X")->raw_data();
  ASSERT_TRUE(RunOp(&ws, R"(type: "Relu" input: "X" output: "X")"));
  EXPECT_EQ(Fetch<float>(ws, "X"), (std::vector<float>{0, 1, 0, 2}));
  EXPECT_EQ(ws.GetBlob("X")->raw_data(), before);
}

TEST(MathOpsTest, ReluRejectsIntegerInputNamingIt) {
  Workspace ws;
  Feed<int32_t>(&ws, "X", {2}, {-1, 1});
  std::string error = RunOpError(&ws, R"(type: "Relu" input: "X" output: "Y")");
  EXPECT_TRUE(Contains(error, "input 'X' int32[2] must be float32")) << error;
}

TEST(MathOpsTest, InPlaceRulesFollowCaffe2) {
  Workspace ws;
  Feed<float>(&ws, "A", {2}, {1, 2});
  Feed<float>(&ws, "B", {2}, {1, 2});
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "Sum" input: "A" input: "B" output: "B")"),
                       "does not allow in-place"));
  EXPECT_TRUE(Contains(RunOpError(&ws, R"(type: "Copy" input: "A" output: "A")"),
                       "does not allow in-place"));
}

}  // namespace
}  // namespace braid::test
