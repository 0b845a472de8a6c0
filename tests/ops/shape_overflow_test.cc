// Shapes whose element count or byte size overflows int64 are errors naming the op and the
// shape, wherever the shape comes from: a fill's arguments or input, a Reshape, any op's shape
// inference (OpSchema::InferShapes) and any tensor (Tensor::Reshape, runtime/core/element_count.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "runtime/core/shape_inference.h"

namespace braid::test {
namespace {

constexpr char kOverflowingShape[] = "[4294967296,4294967296,16]";

void ExpectContains(const std::string& text, const std::vector<std::string>& fragments) {
  for (const std::string& fragment : fragments) {
    EXPECT_NE(text.find(fragment), std::string::npos) << text;
  }
}

// 2^32 * 2^32 * 16 wraps to 0 in int64: before the check this printed an empty tensor.
TEST(ShapeOverflowTest, ConstantFillShapeArgumentIsAnError) {
  Workspace ws;
  const std::string op = R"(type: "ConstantFill" output: "Y"
      arg { name: "shape" ints: [4294967296, 4294967296, 16] } arg { name: "value" f: 1 })";
  ExpectContains(RunOpError(&ws, op), {"op #0 (ConstantFill", "ConstantFill 'Y'",
                                       kOverflowingShape, "more elements than int64 can count"});
  ExpectContains(InferError(ws, op), {"ConstantFill 'Y'", kOverflowingShape});
  const Tensor* y = ws.GetBlob("Y");
  EXPECT_TRUE(y == nullptr || !y->has_storage());
}

TEST(ShapeOverflowTest, FillShapeFromAnInputsContentsIsAnError) {
  Workspace ws;
  Feed<int64_t>(&ws, "dims", {3}, {4294967296, 4294967296, 16});
  ExpectContains(RunOpError(&ws, R"(type: "GaussianFill" input: "dims" output: "Y"
                                    arg { name: "input_as_shape" i: 1 })"),
                 {"GaussianFill 'Y'", "shape input 'dims' int64[3]", kOverflowingShape});
}

// Element count within int64, bytes beyond it: 2^61 float64 elements are 2^64 bytes.
TEST(ShapeOverflowTest, ByteSizeOverflowIsAnErrorToo) {
  Workspace ws;
  const std::string op = R"(type: "ConstantFill" output: "Y" arg { name: "dtype" i: 13 }
      arg { name: "shape" ints: [2305843009213693952] })";
  ExpectContains(InferError(ws, op), {"output 'Y'", "[2305843009213693952] of float64",
                                      "more bytes than int64 can count"});
  ExpectContains(RunOpError(&ws, op), {"op #0 (ConstantFill", "more bytes than int64"});
}

// An empty input "matches" the overflowing shape, whose product wraps to 0.
TEST(ShapeOverflowTest, ReshapeToAnOverflowingShapeIsAnError) {
  Workspace ws;
  Feed<float>(&ws, "X", {0}, {});
  const std::string op = R"(type: "Reshape" input: "X" output: "Y" output: "old"
      arg { name: "shape" ints: [4294967296, 4294967296, 16] })";
  // The product of the dims used to wrap to 0, the element count of X, and pass the check.
  ExpectContains(InferError(ws, op), {"cannot reshape input 'X'", kOverflowingShape,
                                      "more elements than int64 can count"});
  ExpectContains(RunOpError(&ws, op), {"op #0 (Reshape", kOverflowingShape,
                                       "more elements than int64 can count"});
}

TEST(ShapeOverflowTest, NetShapeInferenceNamesTheOp) {
  NetDef net = NetOf({R"(type: "ConstantFill" output: "A" arg { name: "shape" ints: 2 })",
                      R"(type: "ConstantFill" name: "big" output: "B"
                         arg { name: "shape" ints: [4294967296, 4294967296, 16] })"});
  try {
    InferBlobShapes(net, {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    ExpectContains(e.status().message(), {"op #1", "big", kOverflowingShape});
  }
}

}  // namespace
}  // namespace braid::test
