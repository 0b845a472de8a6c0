// GivenTensorFill and its typed siblings: values and types per op, Caffe2's `dtype` on
// GivenTensorFill, the shape from `shape`, an input or `input_as_shape`, and the errors for a
// values/shape mismatch, values that do not fit the type, values in the wrong field and shapes
// that overflow int64.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "runtime/exec/net.h"

namespace braid::test {
namespace {

void ExpectBothFail(const std::string& op, const std::vector<std::string>& fragments) {
  Workspace ws;
  const std::string run = RunOpError(&ws, op), infer = InferError(ws, op);
  for (const std::string& fragment : fragments) {
    EXPECT_NE(run.find(fragment), std::string::npos) << run;
    EXPECT_NE(infer.find(fragment), std::string::npos) << infer;
  }
}

TEST(GivenTensorFillTest, FloatValuesFillTheShapeInOrder) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorFill" output: "W"
      arg { name: "shape" ints: 2 ints: 3 }
      arg { name: "values" floats: [0.5, -1, 2, 3.25, 4, -5] })"));
  EXPECT_EQ(ShapeOf(ws, "W"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Fetch<float>(ws, "W"), (std::vector<float>{0.5f, -1, 2, 3.25f, 4, -5}));
}

TEST(GivenTensorFillTest, EachTypedOpGivesItsType) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorIntFill" output: "i32"
      arg { name: "shape" ints: 3 } arg { name: "values" ints: [-2147483648, 0, 2147483647] })"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorInt64Fill" output: "i64"
      arg { name: "shape" ints: 2 } arg { name: "values" ints: [5000000000, -7] })"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorBoolFill" output: "b"
      arg { name: "shape" ints: 3 } arg { name: "values" ints: [1, 0, 1] })"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorDoubleFill" output: "f64"
      arg { name: "shape" ints: 2 } arg { name: "values" floats: [0.25, -8] })"));
  EXPECT_EQ(Fetch<int32_t>(ws, "i32"), (std::vector<int32_t>{INT32_MIN, 0, INT32_MAX}));
  EXPECT_EQ(Fetch<int64_t>(ws, "i64"), (std::vector<int64_t>{5000000000, -7}));
  EXPECT_EQ(Fetch<bool>(ws, "b"), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Fetch<double>(ws, "f64"), (std::vector<double>{0.25, -8}));
}

// Caffe2 reads the bytes of one string: "values" with strings: ["..."] (or s: "...").
TEST(GivenTensorFillTest, ByteStringToUInt8TakesEveryByteOfTheString) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorByteStringToUInt8Fill" output: "u8"
      arg { name: "shape" ints: 2 ints: 2 } arg { name: "values" strings: "A\000\377z" })"));
  EXPECT_EQ(Fetch<uint8_t>(ws, "u8"), (std::vector<uint8_t>{65, 0, 255, 122}));
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorByteStringToUInt8Fill" output: "u8s"
      arg { name: "shape" ints: 3 } arg { name: "values" s: "\001\002\003" })"));
  EXPECT_EQ(Fetch<uint8_t>(ws, "u8s"), (std::vector<uint8_t>{1, 2, 3}));
}

TEST(GivenTensorFillTest, DTypeArgumentPicksTheTypeAndTheField) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorFill" output: "i64" arg { name: "dtype" i: 10 }
      arg { name: "shape" ints: 2 } arg { name: "values" ints: [3, -4] })"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorFill" output: "f64" arg { name: "dtype" i: 13 }
      arg { name: "shape" ints: 1 } arg { name: "values" floats: 1.5 })"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorFill" output: "b" arg { name: "dtype" i: 5 }
      arg { name: "shape" ints: 2 } arg { name: "values" ints: [0, 1] })"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorFill" output: "i32" arg { name: "dtype" i: 2 }
      arg { name: "shape" ints: 1 } arg { name: "values" ints: 9 })"));
  EXPECT_EQ(Fetch<int64_t>(ws, "i64"), (std::vector<int64_t>{3, -4}));
  EXPECT_EQ(Fetch<double>(ws, "f64"), (std::vector<double>{1.5}));
  EXPECT_EQ(Fetch<bool>(ws, "b"), (std::vector<bool>{false, true}));
  EXPECT_EQ(Fetch<int32_t>(ws, "i32"), (std::vector<int32_t>{9}));
  ExpectBothFail(R"(type: "GivenTensorFill" output: "s" arg { name: "dtype" i: 4 }
                    arg { name: "values" strings: "x" })",
                 {"GivenTensorFill does not support dtype 4"});
}

TEST(GivenTensorFillTest, ShapeComesFromExtraShapeAnInputOrItsContents) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorFill" output: "A"
      arg { name: "shape" ints: 2 } arg { name: "extra_shape" ints: 2 }
      arg { name: "values" floats: [1, 2, 3, 4] })"));
  EXPECT_EQ(ShapeOf(ws, "A"), (std::vector<int64_t>{2, 2}));
  Feed<float>(&ws, "like", {3, 1}, {0, 0, 0});
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorInt64Fill" input: "like" output: "B"
      arg { name: "values" ints: [7, 8, 9] })"));
  EXPECT_EQ(ShapeOf(ws, "B"), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(Fetch<int64_t>(ws, "B"), (std::vector<int64_t>{7, 8, 9}));
  Feed<int64_t>(&ws, "dims", {2}, {1, 2});
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorFill" input: "dims" output: "C"
      arg { name: "input_as_shape" i: 1 } arg { name: "values" floats: [5, 6] })",
                    /*allow_unknown=*/true));
  EXPECT_EQ(ShapeOf(ws, "C"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Fetch<float>(ws, "C"), (std::vector<float>{5, 6}));
}

// No shape is a scalar, as in Caffe2: one value.
TEST(GivenTensorFillTest, NoShapeIsAScalar) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "GivenTensorFill" output: "s"
      arg { name: "values" floats: 4 })"));
  EXPECT_TRUE(ShapeOf(ws, "s").empty());
  EXPECT_EQ(Fetch<float>(ws, "s"), (std::vector<float>{4}));
}

TEST(GivenTensorFillTest, ValuesShapeMismatchNamesTheOpAndBothCounts) {
  ExpectBothFail(R"(type: "GivenTensorFill" output: "W" arg { name: "shape" ints: [2, 3] }
                    arg { name: "values" floats: [1, 2, 3, 4, 5] })",
                 {"GivenTensorFill 'W'", "holds 5 values", "shape [2,3] holds 6 elements"});
  ExpectBothFail(R"(type: "GivenTensorByteStringToUInt8Fill" output: "u" arg { name: "shape"
                    ints: 2 } arg { name: "values" strings: "abc" })",
                 {"GivenTensorByteStringToUInt8Fill 'u'", "holds 3 values", "holds 2 elements"});
  // Taken from an input at run time.
  Workspace ws;
  Feed<float>(&ws, "like", {4}, {0, 0, 0, 0});
  const std::string error = RunOpError(&ws, R"(type: "GivenTensorIntFill" input: "like"
      output: "Y" arg { name: "values" ints: [1, 2] })");
  EXPECT_NE(error.find("op #0 (GivenTensorIntFill"), std::string::npos) << error;
  EXPECT_NE(error.find("holds 2 values, but the output shape [4] holds 4"), std::string::npos)
      << error;
}

TEST(GivenTensorFillTest, ValuesThatDoNotFitTheTypeAreErrors) {
  Workspace ws;
  std::string error = RunOpError(&ws, R"(type: "GivenTensorIntFill" output: "Y"
      arg { name: "shape" ints: 2 } arg { name: "values" ints: [1, 2147483648] })");
  EXPECT_NE(error.find("value #1 of 'values' (2147483648) does not fit int32"), std::string::npos)
      << error;
  error = RunOpError(&ws, R"(type: "GivenTensorBoolFill" output: "Y"
      arg { name: "shape" ints: 2 } arg { name: "values" ints: [1, 2] })");
  EXPECT_NE(error.find("value #1 of 'values' (2) does not fit bool"), std::string::npos) << error;
}

TEST(GivenTensorFillTest, ValuesInTheWrongFieldAreErrors) {
  ExpectBothFail(R"(type: "GivenTensorFill" output: "W" arg { name: "shape" ints: 2 }
                    arg { name: "values" ints: [1, 2] })",
                 {"GivenTensorFill 'W' reads argument 'values' as floats, but it holds ints"});
  // A field the op's schema does not declare fails when the net is built (runtime/core/arg_spec.h);
  // shape inference, which runs without building a net, reports it itself.
  const std::string floats_for_ints = R"(type: "GivenTensorInt64Fill" output: "W"
      arg { name: "shape" ints: 2 } arg { name: "values" floats: [1, 2] })";
  Workspace ws;
  EXPECT_NE(RunOpError(&ws, floats_for_ints)
                .find("argument 'values' must be a list of ints (ints), got a list of floats"),
            std::string::npos);
  EXPECT_NE(InferError(ws, floats_for_ints)
                .find("reads argument 'values' as ints, but it holds floats"),
            std::string::npos);
  ExpectBothFail(R"(type: "GivenTensorByteStringToUInt8Fill" output: "W" arg { name: "shape"
                    ints: 2 } arg { name: "values" strings: "a" strings: "b" })",
                 {"as one string (strings with one entry, or s), but it holds 2 strings"});
}

TEST(GivenTensorFillTest, ShapeWhoseElementCountOverflowsIsAnError) {
  ExpectBothFail(R"(type: "GivenTensorFill" output: "W"
                    arg { name: "shape" ints: [4294967296, 4294967296, 16] }
                    arg { name: "values" floats: 0 })",
                 {"GivenTensorFill 'W'", "shape [4294967296,4294967296,16]",
                  "more elements than int64 can count"});
}

// The model zoo's init nets: a weight and a bias, then a predict net reads them.
TEST(GivenTensorFillTest, InitNetFeedsAPredictNet) {
  Workspace ws;
  NetDef init = NetOf({R"(type: "GivenTensorFill" output: "w"
                          arg { name: "shape" ints: [2, 2] } arg { name: "values" floats: [1, 2, 3, 4] })",
                       R"(type: "GivenTensorFill" output: "b"
                          arg { name: "shape" ints: 2 } arg { name: "values" floats: [10, 20] })"});
  ASSERT_TRUE(ws.RunNetOnce(init).ok());
  Feed<float>(&ws, "x", {1, 2}, {1, 1});
  ASSERT_TRUE(RunOp(&ws, R"(type: "FC" input: "x" input: "w" input: "b" output: "y")"));
  EXPECT_EQ(Fetch<float>(ws, "y"), (std::vector<float>{13, 27}));
}

}  // namespace
}  // namespace braid::test
