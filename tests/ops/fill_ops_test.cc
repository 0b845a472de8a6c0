#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "ops/op_test_util.h"
#include "runtime/exec/net.h"

namespace braid::test {
namespace {

TEST(FillOpsTest, ConstantFillFillsShapeWithFloatValue) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" output: "Y"
      arg { name: "shape" ints: 2 ints: 3 } arg { name: "value" f: 1.5 })"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Fetch<float>(ws, "Y"), std::vector<float>(6, 1.5f));
}

TEST(FillOpsTest, ConstantFillHonoursCaffe2DTypeNumbers) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" output: "i32"
      arg { name: "shape" ints: 2 } arg { name: "value" i: 7 } arg { name: "dtype" i: 2 })"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" output: "i64"
      arg { name: "shape" ints: 2 } arg { name: "value" i: 5000000000 } arg { name: "dtype" i: 10 })"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" output: "b"
      arg { name: "shape" ints: 2 } arg { name: "value" i: 1 } arg { name: "dtype" i: 5 })"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" output: "u8"
      arg { name: "shape" ints: 2 } arg { name: "value" i: 200 } arg { name: "dtype" i: 6 })"));
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" output: "f64"
      arg { name: "shape" ints: 2 } arg { name: "value" f: 2.5 } arg { name: "dtype" i: 13 })"));
  EXPECT_EQ(Fetch<int32_t>(ws, "i32"), (std::vector<int32_t>{7, 7}));
  EXPECT_EQ(Fetch<int64_t>(ws, "i64"), (std::vector<int64_t>{5000000000, 5000000000}));
  EXPECT_EQ(Fetch<bool>(ws, "b"), (std::vector<bool>{true, true}));
  EXPECT_EQ(Fetch<uint8_t>(ws, "u8"), (std::vector<uint8_t>{200, 200}));
  EXPECT_EQ(Fetch<double>(ws, "f64"), (std::vector<double>{2.5, 2.5}));
}

// A value the output type cannot hold is an error naming it, as Caffe2 refuses a lossy argument;
// a float value is never converted to an integer unless the output is one (a float fill of 3.7e19
// converted it to int64 first, undefined behaviour found by the netdef_binary fuzz harness).
TEST(FillOpsTest, ConstantFillValueThatDoesNotFitTheOutputTypeIsAnError) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" output: "F"
      arg { name: "shape" ints: 2 } arg { name: "value" f: 3.7e19 })"));
  EXPECT_EQ(Fetch<float>(ws, "F"), (std::vector<float>{3.7e19f, 3.7e19f}));
  const std::string fill = R"(type: "ConstantFill" output: "Y" arg { name: "shape" ints: 2 } )";
  EXPECT_NE(RunOpError(&ws, fill + R"(arg { name: "value" f: 3.7e19 } arg { name: "dtype" i: 10 })")
                .find("does not fit the output type int64"),
            std::string::npos);
  EXPECT_NE(RunOpError(&ws, fill + R"(arg { name: "value" f: nan } arg { name: "dtype" i: 2 })")
                .find("does not fit the output type int32"),
            std::string::npos);
  EXPECT_NE(RunOpError(&ws,
                       fill + R"(arg { name: "value" i: 5000000000 } arg { name: "dtype" i: 2 })")
                .find("argument 'value' 5000000000 does not fit the output type int32"),
            std::string::npos);
  EXPECT_NE(RunOpError(&ws, fill + R"(arg { name: "value" i: 256 } arg { name: "dtype" i: 6 })")
                .find("argument 'value' 256 does not fit the output type uint8"),
            std::string::npos);
  ASSERT_TRUE(RunOp(&ws, fill + R"(arg { name: "value" f: -2.5 } arg { name: "dtype" i: 2 })"));
  EXPECT_EQ(Fetch<int32_t>(ws, "Y"), (std::vector<int32_t>{-2, -2}));
}

TEST(FillOpsTest, ConstantFillIntegerValueWithoutDTypeGivesInt64) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" output: "Y"
      arg { name: "shape" ints: 3 } arg { name: "value" i: -4 })"));
  EXPECT_EQ(Fetch<int64_t>(ws, "Y"), (std::vector<int64_t>{-4, -4, -4}));
}

TEST(FillOpsTest, ConstantFillNoShapeGivesScalarZero) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" output: "Y")"));
  EXPECT_TRUE(ShapeOf(ws, "Y").empty());
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{0.f}));
}

TEST(FillOpsTest, ConstantFillTakesTheInputsShape) {
  Workspace ws;
  Feed<float>(&ws, "X", {4, 2}, std::vector<float>(8, 9.f));
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" input: "X" output: "Y"
      arg { name: "value" i: 3 } arg { name: "dtype" i: 2 })"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(Fetch<int32_t>(ws, "Y"), std::vector<int32_t>(8, 3));
}

TEST(FillOpsTest, ConstantFillInPlaceOverwritesTheInput) {
  Workspace ws;
  Feed<float>(&ws, "X", {3}, {1, 2, 3});
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" input: "X" output: "X"
      arg { name: "value" f: -1 })"));
  EXPECT_EQ(Fetch<float>(ws, "X"), (std::vector<float>{-1, -1, -1}));
}

TEST(FillOpsTest, ConstantFillInputAsShapeReadsTheInputsContents) {
  Workspace ws;
  Feed<int64_t>(&ws, "dims", {3}, {2, 5, 1});
  ASSERT_TRUE(RunOp(&ws, R"(type: "ConstantFill" input: "dims" output: "Y"
      arg { name: "input_as_shape" i: 1 } arg { name: "value" f: 0.25 }
      arg { name: "extra_shape" ints: 2 })",
                    /*allow_unknown=*/true));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{2, 5, 1, 2}));
  EXPECT_EQ(Fetch<float>(ws, "Y"), std::vector<float>(20, 0.25f));
}

TEST(FillOpsTest, ConstantFillRejectsInputTogetherWithShape) {
  Workspace ws;
  Feed<float>(&ws, "X", {2}, {1, 2});
  std::string op = R"(type: "ConstantFill" input: "X" output: "Y" arg { name: "shape" ints: 2 })";
  std::string error = RunOpError(&ws, op);
  EXPECT_NE(error.find("not both (input 'X')"), std::string::npos) << error;
  EXPECT_NE(error.find("op #0 (ConstantFill"), std::string::npos) << error;
  EXPECT_NE(InferError(ws, op).find("not both"), std::string::npos);
}

TEST(FillOpsTest, ConstantFillRejectsUnsupportedDType) {
  Workspace ws;
  std::string error = RunOpError(&ws, R"(type: "ConstantFill" output: "Y"
      arg { name: "dtype" i: 8 })");
  EXPECT_NE(error.find("does not support dtype 8"), std::string::npos) << error;
}

TEST(FillOpsTest, GaussianFillSamplesHaveTheRequestedMoments) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "GaussianFill" output: "Y"
      arg { name: "shape" ints: 200 ints: 100 } arg { name: "mean" f: 3 }
      arg { name: "std" f: 2 })"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{200, 100}));
  std::vector<float> y = Fetch<float>(ws, "Y");
  EXPECT_NEAR(Mean(y), 3.0, 0.05);
  EXPECT_NEAR(StdDev(y), 2.0, 0.05);
}

TEST(FillOpsTest, UniformFillSamplesStayInRangeAndCoverIt) {
  Workspace ws;
  ASSERT_TRUE(RunOp(&ws, R"(type: "UniformFill" output: "Y"
      arg { name: "shape" ints: 10000 } arg { name: "min" f: -2 } arg { name: "max" f: 5 })"));
  std::vector<float> y = Fetch<float>(ws, "Y");
  EXPECT_GE(*std::min_element(y.begin(), y.end()), -2.f);
  EXPECT_LE(*std::max_element(y.begin(), y.end()), 5.f);
  EXPECT_LT(*std::min_element(y.begin(), y.end()), -1.9f);
  EXPECT_GT(*std::max_element(y.begin(), y.end()), 4.9f);
  EXPECT_NEAR(Mean(y), 1.5, 0.1);
}

TEST(FillOpsTest, UniformFillRejectsMinAboveMax) {
  Workspace ws;
  std::string error = RunOpError(&ws, R"(type: "UniformFill" output: "Y"
      arg { name: "min" f: 2 } arg { name: "max" f: 1 })");
  EXPECT_NE(error.find("'min'"), std::string::npos) << error;
}

TEST(FillOpsTest, UniformIntFillDrawsEveryIntegerOfTheClosedRange) {
  Workspace ws;
  Feed<float>(&ws, "like", {50, 20}, std::vector<float>(1000, 0.f));
  ASSERT_TRUE(RunOp(&ws, R"(type: "UniformIntFill" input: "like" output: "Y"
      arg { name: "min" i: 3 } arg { name: "max" i: 7 })"));
  EXPECT_EQ(ShapeOf(ws, "Y"), (std::vector<int64_t>{50, 20}));
  std::vector<int32_t> y = Fetch<int32_t>(ws, "Y");
  EXPECT_EQ(std::set<int32_t>(y.begin(), y.end()), (std::set<int32_t>{3, 4, 5, 6, 7}));
}

// The fills of one net, run in a fresh workspace; returns every output's values.
std::vector<std::vector<float>> RunFills(const NetDef& net) {
  Workspace ws;
  Status status = ws.RunNetOnce(net);
  EXPECT_TRUE(status.ok()) << status.ToString();
  std::vector<std::vector<float>> values;
  for (const OperatorDef& op : net.op()) {
    if (op.type() == "UniformIntFill") {
      std::vector<int32_t> ints = Fetch<int32_t>(ws, op.output(0));
      values.emplace_back(ints.begin(), ints.end());
    } else {
      values.push_back(Fetch<float>(ws, op.output(0)));
    }
  }
  return values;
}

const std::vector<std::string> kRandomFills = {
    R"(type: "GaussianFill" output: "g" arg { name: "shape" ints: 64 })",
    R"(type: "UniformFill" output: "u" arg { name: "shape" ints: 64 })",
    R"(type: "UniformIntFill" output: "i" arg { name: "shape" ints: 64 }
       arg { name: "max" i: 1000000 })",
    R"(type: "GaussianFill" output: "g_seeded" arg { name: "shape" ints: 64 }
       arg { name: "seed" i: 42 })",
    R"(type: "GaussianFill" output: "g_seeded_too" arg { name: "shape" ints: 64 }
       arg { name: "seed" i: 42 })",
};

TEST(FillOpsTest, RandomFillSameNetGivesIdenticalValuesOnAnyScheduleAndThreadCount) {
  const std::vector<std::vector<float>> simple = RunFills(NetOf(kRandomFills));
  for (int workers : {1, 2, 4}) {
    NetDef dag = NetOf(kRandomFills, "dag");
    Argument* arg = dag.add_arg();
    arg->set_name("num_workers");
    arg->set_i(workers);
    SCOPED_TRACE("dag workers " + std::to_string(workers));
    EXPECT_EQ(RunFills(dag), simple);
  }
}

TEST(FillOpsTest, RandomFillOutputNameSeedsTheStreamUnlessSeedIsGiven) {
  const std::vector<std::vector<float>> v = RunFills(NetOf(kRandomFills));
  NetDef renamed = NetOf(kRandomFills);
  renamed.mutable_op(0)->set_output(0, "g_other");
  const std::vector<std::vector<float>> w = RunFills(renamed);
  EXPECT_NE(v[0], w[0]);  // different output name, different values
  EXPECT_EQ(v[1], w[1]);
  EXPECT_EQ(v[3], v[4]);  // one seed argument, identical values whatever the name
}

TEST(FillOpsTest, RandomFillEachRunDrawsFreshValues) {
  Workspace ws;
  Net* net = ws.CreateNet(NetOf({kRandomFills[0]}));
  ASSERT_TRUE(net->Run().ok());
  std::vector<float> first = Fetch<float>(ws, "g");
  ASSERT_TRUE(net->Run().ok());
  EXPECT_NE(Fetch<float>(ws, "g"), first);
}

}  // namespace
}  // namespace braid::test
