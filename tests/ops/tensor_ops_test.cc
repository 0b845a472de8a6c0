// Cast, ExpandDims, Squeeze, Shape and Slice: values against hand-computed results, shape inference
// against the kernels, in-place use, errors naming the blobs, and gradients.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "braid/status.h"
#include "ops/op_test_util.h"
#include "runtime/core/gradient.h"
#include "testing/gradient_checker.h"

namespace braid::test {
namespace {

using ::braid::testing::CheckGradient;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::vector<float> Iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

std::vector<OperatorDef> GradientOpsOf(const std::string& op_text) {
  const OperatorDef op = ParseOp(op_text);
  std::vector<std::string> input_grads;
  for (const std::string& in : op.input()) input_grads.push_back(in + "_grad");
  return (*FindGradientMaker(op.type()))(GradientRequest{op, {op.output(0) + "_grad"}, input_grads})
      .ops;
}

TEST(CastTest, ConvertsBetweenTypesByNumberOrName) {
  Workspace ws;
  Feed<float>(&ws, "F", {4}, {2.7f, -2.7f, 0, 255.9f});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Cast" input: "F" output: "I" arg { name: "to" i: 2 })"));
  EXPECT_EQ(Fetch<int32_t>(ws, "I"), (std::vector<int32_t>{2, -2, 0, 255}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Cast" input: "F" output: "B" arg { name: "to" s: "bool" })"));
  EXPECT_EQ(Fetch<bool>(ws, "B"), (std::vector<bool>{true, true, false, true}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Cast" input: "B" output: "L" arg { name: "to" s: "INT64" })"));
  EXPECT_EQ(Fetch<int64_t>(ws, "L"), (std::vector<int64_t>{1, 1, 0, 1}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Cast" input: "I" output: "D" arg { name: "to" i: 13 }
                            arg { name: "from_type" s: "INT32" })"));
  EXPECT_EQ(Fetch<double>(ws, "D"), (std::vector<double>{2, -2, 0, 255}));
  Feed<int32_t>(&ws, "Wide", {2}, {300, -1});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Cast" input: "Wide" output: "U" arg { name: "to" i: 6 })"));
  EXPECT_EQ(Fetch<uint8_t>(ws, "U"), (std::vector<uint8_t>{44, 255}));  // modulo 256
}

TEST(CastTest, RefusesUnsupportedTypesUnrepresentableValuesAndAWrongFromType) {
  Workspace ws;
  Feed<float>(&ws, "F", {3}, {1, -1, 1e10f});
  EXPECT_TRUE(
      Contains(InferError(ws, R"(type: "Cast" input: "F" output: "Y" arg { name: "to" i: 8 })"),
               "argument 'to' = 8 is not a supported type (FLOAT=1"));
  EXPECT_TRUE(Contains(
      InferError(ws, R"(type: "Cast" input: "F" output: "Y" arg { name: "to" s: "half" })"),
      "argument 'to' = 'half' is not a supported type"));
  EXPECT_TRUE(Contains(InferError(ws, R"(type: "Cast" input: "F" output: "Y")"),
                       "Cast needs the argument 'to'"));
  EXPECT_TRUE(
      Contains(RunOpError(&ws, R"(type: "Cast" input: "F" output: "Y" arg { name: "to" i: 6 })"),
               "input 'F' float32[3] holds -1.000000 at element 1, which uint8 cannot"));
  EXPECT_TRUE(
      Contains(RunOpError(&ws, R"(type: "Cast" input: "F" output: "Y" arg { name: "to" i: 2 })"),
               "at element 2, which int32 cannot represent"));
  EXPECT_TRUE(Contains(InferError(ws, R"(type: "Cast" input: "F" output: "Y" arg { name: "to" i: 2 }
                                         arg { name: "from_type" i: 10 })"),
                       "input 'F' float32[3] must be int64 as argument 'from_type' states"));
}

TEST(CastGradientTest, CastsBackAndNeedsFromType) {
  const std::vector<OperatorDef> back = GradientOpsOf(R"(type: "Cast" input: "X" output: "Y"
      arg { name: "to" i: 13 } arg { name: "from_type" s: "float" })");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].type(), "Cast");
  Workspace ws;
  Feed<double>(&ws, "Y_grad", {2}, {0.5, -1.5});
  ASSERT_TRUE(RunOp(&ws, back[0].DebugString()));
  EXPECT_EQ(Fetch<float>(ws, "X_grad"), (std::vector<float>{0.5, -1.5}));
  try {
    GradientOpsOf(R"(type: "Cast" input: "X" output: "Y" arg { name: "to" i: 13 })");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.status().message(), "needs the argument 'from_type'"));
  }
  Feed<float>(&ws, "X", {2, 2}, {0.1f, 0.2f, -0.3f, 0.4f});
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Cast" input: "X" output: "Y"
      arg { name: "to" i: 1 } arg { name: "from_type" i: 1 })"),
                            &ws));
}

TEST(ExpandDimsSqueezeTest, InsertAndRemoveOnesSortedWithRepeatsIgnored) {
  Workspace ws;
  Feed<float>(&ws, "X", {3, 2}, Iota(6));
  ASSERT_TRUE(RunOp(&ws, R"(type: "ExpandDims" input: "X" output: "E"
                            arg { name: "dims" ints: 2 ints: 0 ints: 2 })"));
  EXPECT_EQ(ShapeOf(ws, "E"), (std::vector<int64_t>{1, 3, 1, 2}));
  EXPECT_EQ(Fetch<float>(ws, "E"), Iota(6));
  ASSERT_TRUE(RunOp(&ws, R"(type: "ExpandDims" input: "X" output: "T"
                            arg { name: "dims" ints: 2 ints: 3 })"));
  EXPECT_EQ(ShapeOf(ws, "T"), (std::vector<int64_t>{3, 2, 1, 1}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Squeeze" input: "E" output: "E"
                            arg { name: "dims" ints: 0 ints: 2 })"));
  EXPECT_EQ(ShapeOf(ws, "E"), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Fetch<float>(ws, "E"), Iota(6));
  ASSERT_TRUE(
      RunOp(&ws, R"(type: "ExpandDims" input: "X" output: "X" arg { name: "dims" ints: 1 })"));
  EXPECT_EQ(ShapeOf(ws, "X"), (std::vector<int64_t>{3, 1, 2}));
}

TEST(ExpandDimsSqueezeTest, RefuseNegativeMissingAndMisfittingDims) {
  Workspace ws;
  Feed<int64_t>(&ws, "X", {3, 1}, {1, 2, 3});
  EXPECT_TRUE(Contains(
      InferError(ws, R"(type: "Squeeze" input: "X" output: "Y" arg { name: "dims" ints: -1 })"),
      "argument 'dims' holds -1: Squeeze takes non-negative dim ids only"));
  EXPECT_TRUE(Contains(InferError(ws, R"(type: "ExpandDims" input: "X" output: "Y")"),
                       "ExpandDims needs the argument 'dims'"));
  EXPECT_TRUE(Contains(
      RunOpError(&ws, R"(type: "Squeeze" input: "X" output: "Y" arg { name: "dims" ints: 0 })"),
      "cannot squeeze dim 0 of input 'X' int64[3,1]: its size is not 1"));
  EXPECT_TRUE(Contains(
      RunOpError(&ws, R"(type: "Squeeze" input: "X" output: "Y" arg { name: "dims" ints: 2 })"),
      "names dim 2, but input 'X' int64[3,1] has 2 dims"));
  EXPECT_TRUE(Contains(
      InferError(ws, R"(type: "ExpandDims" input: "X" output: "Y" arg { name: "dims" ints: 3 })"),
      "names dim 3, but input 'X' int64[3,1] expands to 3 dims"));
}

// Caffe2's Shape, as an ONNX-to-Caffe2 export uses it: the dims (or chosen axes) as int64, the
// data unread, and a Reshape that takes them back as its new_shape input.
TEST(ShapeTest, GivesTheDimsOrTheChosenAxesAsInt64) {
  Workspace ws;
  Feed<uint8_t>(&ws, "X", {2, 3, 4}, std::vector<uint8_t>(24, 7));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Shape" input: "X" output: "dims")"));
  EXPECT_EQ(ShapeOf(ws, "dims"), (std::vector<int64_t>{3}));
  EXPECT_EQ(Fetch<int64_t>(ws, "dims"), (std::vector<int64_t>{2, 3, 4}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Shape" input: "X" output: "axes"
                            arg { name: "axes" ints: 2 ints: 0 ints: 2 })"));
  EXPECT_EQ(Fetch<int64_t>(ws, "axes"), (std::vector<int64_t>{4, 2, 4}));

  Feed<float>(&ws, "F", {4, 6}, Iota(24));
  // Reshape's inference cannot know a new_shape input's contents (ops/tensor/reshape_op.h).
  ASSERT_TRUE(RunOp(&ws, R"(type: "Reshape" input: "F" input: "dims" output: "R" output: "old")",
                    /*allow_unknown=*/true));
  EXPECT_EQ(ShapeOf(ws, "R"), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(Fetch<float>(ws, "R"), Iota(24));

  Feed<float>(&ws, "S", {}, {1.f});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Shape" input: "S" output: "scalar_dims")"));
  EXPECT_EQ(ShapeOf(ws, "scalar_dims"), (std::vector<int64_t>{0}));
}

TEST(ShapeTest, AnAxisOutsideTheInputIsAnErrorNamingTheBlob) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, Iota(6));
  EXPECT_TRUE(Contains(
      InferError(ws, R"(type: "Shape" input: "X" output: "Y" arg { name: "axes" ints: 2 })"),
      "argument 'axes' holds 2, but input 'X' float32[2,3] has dims 0 to 1"));
  EXPECT_TRUE(Contains(
      RunOpError(&ws, R"(type: "Shape" input: "X" output: "Y" arg { name: "axes" ints: -1 })"),
      "argument 'axes' holds -1"));
  EXPECT_TRUE(GradientOpsOf(R"(type: "Shape" input: "X" output: "Y")").empty());
}

TEST(ExpandDimsSqueezeGradientTest, AreEachOtherAndMatchFiniteDifferences) {
  std::vector<OperatorDef> back = GradientOpsOf(R"(type: "Squeeze" input: "X" output: "Y"
                                                   arg { name: "dims" ints: 1 })");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].type(), "ExpandDims");
  Workspace ws;
  Feed<float>(&ws, "X", {2, 1, 3}, Iota(6));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Squeeze" input: "X" output: "Y"
                                       arg { name: "dims" ints: 1 })"),
                            &ws));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "ExpandDims" input: "X" output: "Y"
                                       arg { name: "dims" ints: 0 ints: 4 })"),
                            &ws));
}

TEST(SliceTest, ArgumentsWithCaffe2NegativeIndicesAndClamping) {
  Workspace ws;
  Feed<float>(&ws, "X", {3, 4}, Iota(12));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Slice" input: "X" output: "Y"
                            arg { name: "starts" ints: 1 ints: 0 } arg { name: "ends" ints: -1 ints: 2 })"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{4, 5, 8, 9}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Slice" input: "X" output: "Y"
                            arg { name: "starts" ints: 0 ints: -3 } arg { name: "ends" ints: 9 ints: -1 })"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{3, 2}));  // columns 2..4
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{2, 3, 6, 7, 10, 11}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Slice" input: "X" output: "Y"
                            arg { name: "starts" ints: 2 } arg { name: "ends" ints: 3 })"));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{8, 9, 10, 11}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "Slice" input: "X" output: "Y"
                            arg { name: "starts" ints: 1 ints: 1 } arg { name: "ends" ints: 1 ints: 3 })"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{0, 2}));
}

TEST(SliceTest, ThreeDimsAgainstANaiveLoopAndBoundsAsInputs) {
  Workspace ws;
  Feed<int64_t>(&ws, "X", {3, 4, 5}, std::vector<int64_t>(60));
  int64_t* x = ws.GetBlob("X")->mutable_data<int64_t>();
  for (int i = 0; i < 60; ++i) x[i] = i;
  Feed<int32_t>(&ws, "starts", {3}, {1, 1, 2});
  Feed<int64_t>(&ws, "ends", {3}, {3, -2, 4});
  ASSERT_TRUE(RunOp(&ws, R"(type: "Slice" input: "X" input: "starts" input: "ends" output: "Y")",
                    /*allow_unknown=*/true));
  std::vector<int64_t> want;
  for (int i = 1; i < 3; ++i) {
    for (int j = 1; j < 3; ++j) {
      for (int k = 2; k < 4; ++k) want.push_back((i * 4 + j) * 5 + k);
    }
  }
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(Fetch<int64_t>(ws, "Y"), want);
}

TEST(SliceTest, ErrorsNameTheDimAndTheBlob) {
  Workspace ws;
  Feed<float>(&ws, "X", {3, 4}, Iota(12));
  EXPECT_TRUE(Contains(InferError(ws, R"(type: "Slice" input: "X" output: "Y"
      arg { name: "starts" ints: 2 } arg { name: "ends" ints: 1 })"),
                       "cannot slice dim 0 of input 'X' float32[3,4] from 2 to 1"));
  EXPECT_TRUE(Contains(InferError(ws, R"(type: "Slice" input: "X" output: "Y"
      arg { name: "starts" ints: -5 } arg { name: "ends" ints: 1 })"),
                       "cannot slice dim 0 of input 'X' float32[3,4] from -5 to 1"));
  EXPECT_TRUE(Contains(InferError(ws, R"(type: "Slice" input: "X" output: "Y"
      arg { name: "starts" ints: 0 ints: 0 ints: 0 } arg { name: "ends" ints: 1 ints: 1 ints: 1 })"),
                       "must have one length, at most the rank of input 'X' float32[3,4]"));
  EXPECT_TRUE(Contains(InferError(ws, R"(type: "Slice" input: "X" output: "Y")"),
                       "Slice needs the arguments 'starts' and 'ends'"));
  Feed<int32_t>(&ws, "s", {1}, {0});
  EXPECT_TRUE(Contains(InferError(ws, R"(type: "Slice" input: "X" input: "s" input: "s" output: "Y"
      arg { name: "starts" ints: 0 } arg { name: "ends" ints: 1 })"),
                       "not both"));
}

TEST(SliceGradientTest, ScattersDYIntoZerosAndMatchesFiniteDifferences) {
  Workspace ws;
  Feed<float>(&ws, "X", {2, 3}, Iota(6));
  Feed<float>(&ws, "dY", {2, 1}, {7, 8});
  ASSERT_TRUE(RunOp(&ws, R"(type: "SliceGradient" input: "X" input: "dY" output: "dX"
      arg { name: "starts" ints: 0 ints: 1 } arg { name: "ends" ints: -1 ints: 2 })"));
  EXPECT_EQ(Fetch<float>(ws, "dX"), (std::vector<float>{0, 7, 0, 0, 8, 0}));
  Feed<int64_t>(&ws, "starts", {2}, {0, 1});
  Feed<int64_t>(&ws, "ends", {2}, {-1, 2});
  ASSERT_TRUE(RunOp(&ws, R"(type: "SliceGradient" input: "X" input: "starts" input: "ends"
                            input: "dY" output: "dX2")"));
  EXPECT_EQ(Fetch<float>(ws, "dX2"), (std::vector<float>{0, 7, 0, 0, 8, 0}));
  Feed<float>(&ws, "X3", {3, 4, 2}, Iota(24));
  EXPECT_TRUE(CheckGradient(ParseOp(R"(type: "Slice" input: "X3" output: "Y"
      arg { name: "starts" ints: 1 ints: -4 } arg { name: "ends" ints: 3 ints: -2 })"),
                            &ws));
  Feed<int32_t>(&ws, "starts3", {2}, {1, -4});
  Feed<int64_t>(&ws, "ends3", {2}, {3, -2});
  ::braid::testing::GradientCheckOptions x_only;
  x_only.inputs = {0};
  EXPECT_TRUE(CheckGradient(
      ParseOp(R"(type: "Slice" input: "X3" input: "starts3" input: "ends3" output: "Y")"), &ws,
      x_only));
}

}  // namespace
}  // namespace braid::test
