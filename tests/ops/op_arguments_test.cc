// Op arguments against their schemas (runtime/core/op_schema.h Arg, runtime/core/arg_spec.h): every
// schema says what it takes, and a net with an argument its op does not accept fails when it is
// built.
#include <gtest/gtest.h>

#include "braid/status.h"
#include "ops/op_test_util.h"
#include "runtime/core/argument.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"

namespace braid {
namespace {

using test::Feed;
using test::Fetch;
using test::NetOf;
using test::ParseOp;

// The Status building a net of the one op `op_text` throws ("OK" if it builds), in a workspace
// holding X (float [1,1,3,3]) and W (float [1,1,3,3]).
// Builds a net "test" of the one op; `strict`: with the net argument strict_args: 1.
Status BuildError(const std::string& op_text, bool strict = false) {
  Workspace ws;
  Feed<float>(&ws, "X", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
  Feed<float>(&ws, "W", {1, 1, 3, 3}, std::vector<float>(9, 1.f));
  NetDef net = NetOf({op_text});
  if (strict) SetNetIntArg(&net, "strict_args", 1);
  return StatusFromCall([&] { BuildNet(net, &ws); });
}

std::string VerifyArgs(const std::string& op_text) {
  const OperatorDef op = ParseOp(op_text);
  return FindSchema(op.type())->VerifyArgs(op);
}

TEST(OpArgumentsTest, EverySchemaSaysWhichArgumentsItTakes) {
  for (const std::string& type : RegisteredOpTypes()) {
    const OpSchema* schema = FindSchema(type);
    EXPECT_TRUE(schema->args_declared())
        << type << " declares no arguments: give its schema Arg/Args/ArgsOf, NoArgs or AnyArgs";
    if (schema->args_of().empty()) continue;
    const OpSchema* of = FindSchema(schema->args_of());
    EXPECT_TRUE(of != nullptr && of->args_declared())
        << type << " takes the arguments of '" << schema->args_of() << "', which declares none";
  }
}

TEST(OpArgumentsTest, StringWhereIntsAreExpectedFailsWhenTheNetIsBuilt) {
  const Status s = BuildError(R"(type: "Conv" name: "c" input: "X" input: "W" output: "Y"
                    arg { name: "kernels" s: "3" })");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "net 'test' op #0 (Conv 'c'): argument 'kernels' must be a list of ints (ints), got a "
            "string (s) \"3\"");
  EXPECT_TRUE(BuildError(R"(type: "Conv" name: "c" input: "X" input: "W" output: "Y"
                            arg { name: "kernels" ints: 3 ints: 3 })")
                  .ok());
}

// Caffe2 ignores the arguments an op does not read, and published nets carry many (Detectron's
// Relu has cudnn_exhaustive_search, Mask R-CNN2Go's FC an order, brew's helpers dim_in/dim_out):
// such a net builds, and runs.
TEST(OpArgumentsTest, AnArgumentTheOpDoesNotReadIsIgnored) {
  Workspace ws;
  Feed<float>(&ws, "X", {2}, {-1.f, 2.f});
  std::unique_ptr<Net> net = BuildNet(NetOf({R"(type: "Relu" name: "r" input: "X" output: "Y"
      arg { name: "cudnn_exhaustive_search" i: 1 } arg { name: "foo" i: 1 })"}), &ws);
  ASSERT_TRUE(net->Run().ok());
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{0.f, 2.f}));
  // A known argument of another kind stays an error.
  EXPECT_FALSE(BuildError(R"(type: "Relu" name: "r" input: "X" output: "Y"
                             arg { name: "seed" s: "7" })")
                   .ok());
}

// Lenient still refuses a misspelling of a declared name (it would run with the default) and the
// Caffe2 arguments that change results where the op does not take them.
TEST(OpArgumentsTest, MisspellingsAndResultChangingArgumentsStayErrors) {
  const Status typo = BuildError(R"(type: "Conv" name: "c" input: "X" input: "W" output: "Y"
                                    arg { name: "kernal" i: 3 })");
  EXPECT_NE(typo.message().find("unknown argument 'kernal' (did you mean 'kernel'?"),
            std::string::npos)
      << typo.ToString();
  EXPECT_NE(BuildError(R"(type: "Relu" name: "r" input: "X" output: "Y"
                          arg { name: "axis_str" s: "C" })")
                .message()
                .find("unknown argument 'axis_str'"),
            std::string::npos);
  EXPECT_FALSE(BuildError(R"(type: "Sigmoid" name: "s" input: "X" output: "Y"
                             arg { name: "order" s: "NHWC" })")
                   .ok());
  EXPECT_TRUE(BuildError(R"(type: "Sigmoid" name: "s" input: "X" output: "Y"
                            arg { name: "order" s: "NCHW" })")
                  .ok());
}

// strict_args: 1 makes an argument the op does not accept the error it is in a strict net.
TEST(OpArgumentsTest, UnknownArgumentNamesTheOpTheArgumentAndTheAcceptedOnes) {
  const Status s = BuildError(R"(type: "Relu" name: "r" input: "X" output: "Y"
                                 arg { name: "foo" i: 1 })",
                              /*strict=*/true);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "net 'test' op #0 (Relu 'r'): unknown argument 'foo' (accepted: blocked_outputs, "
            "channel_block, order, seed)");
}

TEST(OpArgumentsTest, AnOpWithNoArgumentsAcceptsOnlyTheCommonOnes) {
  EXPECT_EQ(VerifyArgs(R"(type: "Sigmoid" arg { name: "seed" i: 7 })"), "");
  EXPECT_EQ(VerifyArgs(R"(type: "Sigmoid" arg { name: "axis" i: 1 })"),
            "unknown argument 'axis' (accepted: blocked_outputs, channel_block, seed)");
  EXPECT_EQ(VerifyArgs(R"(type: "Sigmoid" arg { name: "seed" f: 7 })"),
            "argument 'seed' must be an int (i), got a float (f) 7.000000");
}

TEST(OpArgumentsTest, FloatArgumentTakesAnIntValueAndComputesWithIt) {
  Workspace ws;
  Feed<float>(&ws, "X", {4}, {-2.f, 0.5f, 1.5f, 3.f});
  ASSERT_TRUE(test::RunOp(&ws, R"(type: "Clip" input: "X" output: "Y"
                                 arg { name: "min" i: 0 } arg { name: "max" i: 1 })"));
  EXPECT_EQ(Fetch<float>(ws, "Y"), (std::vector<float>{0.f, 0.5f, 1.f, 1.f}));
}

TEST(OpArgumentsTest, IntArgumentRefusesAFloat) {
  const Status s = BuildError(R"(type: "Softmax" name: "s" input: "X" output: "Y"
                                 arg { name: "axis" f: 1 })");
  EXPECT_EQ(s.message(),
            "net 'test' op #0 (Softmax 's'): argument 'axis' must be an int (i), got a float (f) "
            "1.000000");
}

TEST(OpArgumentsTest, RepeatedArgumentIsRefused) {
  EXPECT_EQ(VerifyArgs(R"(type: "Softmax" arg { name: "axis" i: 1 } arg { name: "axis" i: 0 })"),
            "argument 'axis' is given twice");
}

TEST(OpArgumentsTest, CastTakesATypeByNumberOrName) {
  EXPECT_EQ(VerifyArgs(R"(type: "Cast" arg { name: "to" i: 10 })"), "");
  EXPECT_EQ(VerifyArgs(R"(type: "Cast" arg { name: "to" s: "INT64" })"), "");
  EXPECT_EQ(VerifyArgs(R"(type: "Cast" arg { name: "to" ints: 10 })"),
            "argument 'to' must be an int (i) or a string (s), got a list of ints (ints)");
}

TEST(OpArgumentsTest, GradientOpsTakeTheirForwardOpsArguments) {
  EXPECT_EQ(VerifyArgs(R"(type: "ConvGradient" arg { name: "kernel" i: 3 }
                          arg { name: "pads" ints: 1 ints: 1 ints: 1 ints: 1 }
                          arg { name: "no_bias" i: 1 })"),
            "");
  EXPECT_EQ(VerifyArgs(R"(type: "AveragePoolGradient" arg { name: "count_include_pad" i: 1 })"),
            "");
  EXPECT_EQ(VerifyArgs(R"(type: "MaxPoolGradient" arg { name: "count_include_pad" i: 1 })")
                .find("unknown argument 'count_include_pad'"),
            0u);
  EXPECT_EQ(VerifyArgs(R"(type: "Conv" arg { name: "no_bias" i: 1 })").find("unknown argument"),
            0u);
}

TEST(OpArgumentsTest, WindowArgumentsFollowTheOpKind) {
  EXPECT_EQ(VerifyArgs(R"(type: "MaxPool" arg { name: "global_pooling" i: 1 })"), "");
  EXPECT_EQ(VerifyArgs(R"(type: "Conv" arg { name: "global_pooling" i: 1 })")
                .find("unknown argument 'global_pooling'"),
            0u);
  EXPECT_EQ(VerifyArgs(R"(type: "Conv" arg { name: "dilations" ints: 2 ints: 2 }
                          arg { name: "legacy_pad" i: 0 } arg { name: "order" s: "NCHW" })"),
            "");
}

// Published Caffe2 nets carry the cuDNN engine's hints on their convolutions; braid's algorithm
// registry decides instead, so the hints are accepted (and only there).
TEST(OpArgumentsTest, ConvolutionsAcceptCaffe2sCudnnHints) {
  const char* hints = R"(arg { name: "exhaustive_search" i: 0 }
                         arg { name: "ws_nbytes_limit" i: 67108864 }
                         arg { name: "shared_buffer" i: 1 })";
  EXPECT_EQ(VerifyArgs(std::string(R"(type: "Conv" )") + hints), "");
  EXPECT_EQ(VerifyArgs(std::string(R"(type: "ConvTranspose" )") + hints), "");
  EXPECT_EQ(VerifyArgs(std::string(R"(type: "ConvGradient" )") + hints), "");
  EXPECT_EQ(VerifyArgs(R"(type: "MaxPool" arg { name: "exhaustive_search" i: 0 })")
                .find("unknown argument 'exhaustive_search'"),
            0u);
}

TEST(OpArgumentsTest, TheErrorComesBeforeAnythingRuns) {
  Workspace ws;
  Feed<float>(&ws, "X", {2}, {1.f, 2.f});
  const Status s = ws.RunNetOnce(NetOf({R"(type: "Relu" input: "X" output: "Y")",
                                        R"(type: "Relu" input: "Y" output: "Z"
                                           arg { name: "seed" s: "1" })"}));
  EXPECT_NE(s.message().find("op #1 (Relu '')"), std::string::npos) << s.ToString();
  EXPECT_EQ(ws.GetBlob("Y"), nullptr);  // op #0 never ran
}

}  // namespace
}  // namespace braid
