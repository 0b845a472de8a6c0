#include "runtime/core/autodiff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "braid/status.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"
#include "testing/gradient_checker.h"
#include "testing/net_text.h"

namespace braid {
namespace {

// Test-only op types: TestNoGradient (1 -> 1, BRAID_NO_GRADIENT's maker) and TestNoMaker (1 -> 1,
// no maker at all). Neither needs a kernel: these nets are only differentiated, never run.
BRAID_OPERATOR_SCHEMA(TestNoGradient).NumInputs(1).NumOutputs(1).NoArgs();
BRAID_OPERATOR_SCHEMA(TestNoMaker).NumInputs(1).NumOutputs(1).NoArgs();
// What BRAID_NO_GRADIENT registers (that macro cannot be used yet: the braced comma in its lambda
// splits the macro arguments).
[[maybe_unused]] const bool kNoGradientRegistered =
    RegisterGradient("TestNoGradient", [](const GradientRequest& r) {
      return GradientOps{{}, std::vector<bool>(r.op.input_size(), false)};
    });

// In-place test ops whose makers' gradient ops cannot run in place: TestInPlaceReduce (X -> X) has
// SumReduceLike(dY, dY) -> dX, which its schema forbids in place; TestInPlaceTwo (X, W -> X) has
// Relu(dY) -> dX then Copy(dY) -> dW, so writing dX over dY would clobber what the Copy reads.
BRAID_OPERATOR_SCHEMA(TestInPlaceReduce).NumInputs(1).NumOutputs(1).AllowInplace({{0, 0}}).NoArgs();
BRAID_OPERATOR_SCHEMA(TestInPlaceTwo).NumInputs(2).NumOutputs(1).AllowInplace({{0, 0}}).NoArgs();
GradientOps InPlaceReduceGradient(const GradientRequest& r) {
  const std::string& dy = r.output_grads[0];
  return {{MakeGradientOp(r.op, "SumReduceLike", {dy, dy}, {r.input_grads[0]})}, {true}};
}
GradientOps InPlaceTwoGradient(const GradientRequest& r) {
  const std::string& dy = r.output_grads[0];
  return {{MakeGradientOp(r.op, "Relu", {dy}, {r.input_grads[0]}),
           MakeGradientOp(r.op, "Copy", {dy}, {r.input_grads[1]})},
          {true, true}};
}
BRAID_REGISTER_GRADIENT(TestInPlaceReduce, InPlaceReduceGradient);
BRAID_REGISTER_GRADIENT(TestInPlaceTwo, InPlaceTwoGradient);

// "Type(in,in)->(out)" for each op from `first` on: the backward pass in one readable string per
// op.
std::vector<std::string> OpsFrom(const NetDef& net, int first) {
  std::vector<std::string> ops;
  for (int i = first; i < net.op_size(); ++i) {
    const OperatorDef& op = net.op(i);
    std::string s = op.type() + "(";
    for (int j = 0; j < op.input_size(); ++j) s += (j ? "," : "") + op.input(j);
    s += ")->(";
    for (int k = 0; k < op.output_size(); ++k) s += (k ? "," : "") + op.output(k);
    ops.push_back(s + ")");
  }
  return ops;
}

std::string ErrorOf(NetDef net, const std::vector<std::string>& losses) {
  try {
    AddGradientOperators(&net, losses);
  } catch (const Error& e) {
    return e.status().ToString();
  }
  return "";
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(AutodiffTest, ChainGetsOneGradientOpPerForwardOp) {
  NetDef net = testing::NetFromText(R"(name: "n"
    op { type: "FC" input: "X" input: "W" input: "b" output: "Y" name: "fc" }
    op { type: "Relu" input: "Y" output: "Z" })");
  GradientMap grads = AddGradientOperators(&net, {"Z"});
  EXPECT_EQ(OpsFrom(net, 2), (std::vector<std::string>{
                                 "ConstantFill(Z)->(Z_grad)",
                                 "ReluGradient(Z,Z_grad)->(Y_grad)",
                                 "FCGradient(X,W,Y_grad)->(W_grad,b_grad,X_grad)",
                             }));
  EXPECT_EQ(
      grads,
      (GradientMap{
          {"X", "X_grad"}, {"W", "W_grad"}, {"b", "b_grad"}, {"Y", "Y_grad"}, {"Z", "Z_grad"}}));
  EXPECT_EQ(net.op(2).arg(0).name(), "value");
  EXPECT_EQ(net.op(2).arg(0).f(), 1.f);
  for (int i = 2; i < net.op_size(); ++i) EXPECT_TRUE(net.op(i).is_gradient_op());
  EXPECT_EQ(net.op(4).name(), "fc_grad");
}

TEST(AutodiffTest, BlobReadBySeveralOpsSumsItsAutosplitParts) {
  NetDef net = testing::NetFromText(R"(name: "n"
    op { type: "Relu" input: "X" output: "A" }
    op { type: "Relu" input: "X" output: "B" }
    op { type: "Sum" input: "A" input: "B" output: "L" })");
  GradientMap grads = AddGradientOperators(&net, {"L"});
  EXPECT_EQ(OpsFrom(net, 3), (std::vector<std::string>{
                                 "ConstantFill(L)->(L_grad)",
                                 "Copy(L_grad)->(A_grad)",
                                 "Copy(L_grad)->(B_grad)",
                                 "ReluGradient(B,B_grad)->(X_grad_autosplit_0)",
                                 "ReluGradient(A,A_grad)->(X_grad_autosplit_1)",
                                 "Sum(X_grad_autosplit_0,X_grad_autosplit_1)->(X_grad)",
                             }));
  EXPECT_EQ(grads.at("X"), "X_grad");
}

TEST(AutodiffTest, OneOpReadingABlobTwiceContributesTwice) {
  NetDef net = testing::NetFromText(R"(name: "n"
    op { type: "Mul" input: "X" input: "X" output: "L" })");
  AddGradientOperators(&net, {"L"});
  EXPECT_EQ(OpsFrom(net, 1), (std::vector<std::string>{
                                 "ConstantFill(L)->(L_grad)",
                                 "MulGradient(X,X,L_grad)->(X_grad_autosplit_0,X_grad_autosplit_1)",
                                 "Sum(X_grad_autosplit_0,X_grad_autosplit_1)->(X_grad)",
                             }));
}

TEST(AutodiffTest, InPlaceReluChainGetsInPlaceGradients) {
  NetDef net = testing::NetFromText(R"(name: "n"
    op { type: "FC" input: "X" input: "W1" input: "b1" output: "h" }
    op { type: "Relu" input: "h" output: "h" }
    op { type: "FC" input: "h" input: "W2" input: "b2" output: "o" }
    op { type: "Relu" input: "o" output: "o" })");
  GradientMap grads = AddGradientOperators(&net, {"o"});
  EXPECT_EQ(OpsFrom(net, 4), (std::vector<std::string>{
                                 "ConstantFill(o)->(o_grad)",
                                 "ReluGradient(o,o_grad)->(o_grad)",
                                 "FCGradient(h,W2,o_grad)->(W2_grad,b2_grad,h_grad)",
                                 "ReluGradient(h,h_grad)->(h_grad)",
                                 "FCGradient(X,W1,h_grad)->(W1_grad,b1_grad,X_grad)",
                             }));
  EXPECT_EQ(grads.at("h"), "h_grad");
  EXPECT_EQ(grads.at("W1"), "W1_grad");
}

TEST(AutodiffTest, InPlaceGradientOnlyWhereSchemaAndOrderAllowIt) {
  NetDef reduce = testing::NetFromText(R"(name: "n"
    op { type: "TestInPlaceReduce" input: "X" output: "X" })");
  AddGradientOperators(&reduce, {"X"});
  EXPECT_EQ(OpsFrom(reduce, 1), (std::vector<std::string>{
                                    "ConstantFill(X)->(X_grad)",
                                    "SumReduceLike(X_grad,X_grad)->(X_grad_autosplit_0)",
                                    "Sum(X_grad_autosplit_0)->(X_grad)",
                                }));
  NetDef two = testing::NetFromText(R"(name: "n"
    op { type: "TestInPlaceTwo" input: "X" input: "W" output: "X" })");
  AddGradientOperators(&two, {"X"});
  EXPECT_EQ(OpsFrom(two, 1), (std::vector<std::string>{
                                 "ConstantFill(X)->(X_grad)",
                                 "Relu(X_grad)->(X_grad_autosplit_0)",
                                 "Copy(X_grad)->(W_grad)",
                                 "Sum(X_grad_autosplit_0)->(X_grad)",
                             }));
}

TEST(AutodiffTest, InPlaceSumDropsTheCopyThatWouldBeAnIdentity) {
  NetDef net = testing::NetFromText(R"(name: "n"
    op { type: "Copy" input: "X" output: "acc" }
    op { type: "Sum" input: "acc" input: "g" output: "acc" })");
  AddGradientOperators(&net, {"acc"});
  EXPECT_EQ(OpsFrom(net, 2), (std::vector<std::string>{
                                 "ConstantFill(acc)->(acc_grad)",
                                 "Copy(acc_grad)->(g_grad)",
                                 "Copy(acc_grad)->(X_grad)",
                             }));
}

TEST(AutodiffTest, TwoLossesAccumulateIntoTheirCommonInput) {
  NetDef net = testing::NetFromText(R"(name: "n"
    op { type: "FC" input: "X" input: "W" input: "b" output: "Y" }
    op { type: "Relu" input: "Y" output: "L1" }
    op { type: "Copy" input: "Y" output: "L2" })");
  GradientMap grads = AddGradientOperators(&net, {"L1", "L2", "L1"});
  EXPECT_EQ(OpsFrom(net, 3), (std::vector<std::string>{
                                 "ConstantFill(L1)->(L1_grad)",
                                 "ConstantFill(L2)->(L2_grad)",
                                 "Copy(L2_grad)->(Y_grad_autosplit_0)",
                                 "ReluGradient(L1,L1_grad)->(Y_grad_autosplit_1)",
                                 "Sum(Y_grad_autosplit_0,Y_grad_autosplit_1)->(Y_grad)",
                                 "FCGradient(X,W,Y_grad)->(W_grad,b_grad,X_grad)",
                             }));
  EXPECT_EQ(grads.at("L1"), "L1_grad");
  EXPECT_EQ(grads.at("L2"), "L2_grad");
}

TEST(AutodiffTest, NoGradientOpStopsTheFlow) {
  NetDef net = testing::NetFromText(R"(name: "n"
    op { type: "FC" input: "X" input: "W" input: "b" output: "Y" }
    op { type: "TestNoGradient" input: "Y" output: "Z" }
    op { type: "Add" input: "Y" input: "Z" output: "L" })");
  GradientMap grads = AddGradientOperators(&net, {"L"});
  EXPECT_EQ(OpsFrom(net, 3), (std::vector<std::string>{
                                 "ConstantFill(L)->(L_grad)",
                                 "Copy(L_grad)->(Y_grad)",
                                 "Copy(L_grad)->(Z_grad)",
                                 "FCGradient(X,W,Y_grad)->(W_grad,b_grad,X_grad)",
                             }));
  EXPECT_EQ(grads.count("Z"), 1u);
}

TEST(AutodiffTest, OpsWithoutInputsStopTheFlowWithoutAMaker) {
  NetDef net = testing::NetFromText(R"(name: "n"
    op { type: "ConstantFill" output: "b" arg { name: "shape" ints: 3 } }
    op { type: "FC" input: "X" input: "W" input: "b" output: "Y" })");
  GradientMap grads = AddGradientOperators(&net, {"Y"});
  EXPECT_EQ(OpsFrom(net, 2), (std::vector<std::string>{
                                 "ConstantFill(Y)->(Y_grad)",
                                 "FCGradient(X,W,Y_grad)->(W_grad,b_grad,X_grad)",
                             }));
  EXPECT_EQ(grads.at("b"), "b_grad");
}

TEST(AutodiffTest, MissingMakerOnTheLossPathNamesTheOp) {
  NetDef net = testing::NetFromText(R"(name: "n"
    op { type: "FC" input: "X" input: "W" input: "b" output: "Y" }
    op { type: "TestNoMaker" input: "Y" output: "Z" name: "nm" }
    op { type: "TestNoMaker" input: "Y" output: "unused" }
    op { type: "Relu" input: "Z" output: "L" })");
  std::string error = ErrorOf(net, {"L"});
  EXPECT_TRUE(Contains(error, "net 'n' op #1 (TestNoMaker 'nm'): no gradient maker")) << error;
  EXPECT_TRUE(Contains(error, "output 'Z'")) << error;
  // Off the loss path a missing maker does not matter.
  EXPECT_EQ(ErrorOf(net, {"Y"}), "");
}

TEST(AutodiffTest, GradientReadingAnOverwrittenBlobIsAnError) {
  NetDef fc_then_relu = testing::NetFromText(R"(name: "n"
    op { type: "FC" input: "X" input: "W" input: "b" output: "Y" }
    op { type: "Relu" input: "X" output: "X" name: "r" })");
  std::string error = ErrorOf(fc_then_relu, {"Y"});
  EXPECT_TRUE(Contains(error, "op #0 (FC ''): its gradient reads 'X'")) << error;
  EXPECT_TRUE(Contains(error, "op #1 (Relu 'r') overwrites it later")) << error;
  NetDef in_place_mul = testing::NetFromText(R"(name: "n"
    op { type: "Mul" input: "A" input: "B" output: "A" })");
  error = ErrorOf(in_place_mul, {"A"});
  EXPECT_TRUE(Contains(error, "op #0 (Mul ''): building its gradient")) << error;
  EXPECT_TRUE(Contains(error, "in place of its input 'A'")) << error;
}

TEST(AutodiffTest, LossMustBeWrittenByTheNet) {
  NetDef net = testing::NetFromText(R"(name: "n" op { type: "Relu" input: "X" output: "Y" })");
  std::string error = ErrorOf(net, {"X"});
  EXPECT_TRUE(Contains(error, "NotFound: net 'n': loss 'X' is not written by any op")) << error;
  EXPECT_TRUE(Contains(ErrorOf(net, {"nope"}), "loss 'nope'"));
}

TEST(AutodiffTest, GradientNamesMayNotBeNetBlobs) {
  NetDef net = testing::NetFromText(R"(name: "n"
    op { type: "Relu" input: "X" output: "Y" })");
  AddGradientOperators(&net, {"Y"});
  std::string error = ErrorOf(net, {"Y"});
  EXPECT_TRUE(Contains(error, "gradient blob 'Y_grad' is already a blob of the net")) << error;
}

// A small MLP whose loss is sum(L), L = FC(Relu(FC(X))) * lw with fixed random weights lw: the
// backward pass seeds L_grad with ones, so the gradients are those of sum(L).
NetDef MlpNet(const std::string& name, const std::string& type) {
  NetDef net = testing::NetFromText(R"(
    op { type: "FC" input: "X" input: "W1" input: "b1" output: "h" }
    op { type: "Relu" input: "h" output: "h" }
    op { type: "FC" input: "h" input: "W2" input: "b2" output: "o" }
    op { type: "Mul" input: "o" input: "lw" output: "L" })");
  net.set_name(name);
  net.set_type(type);
  Argument* workers = net.add_arg();
  workers->set_name("num_workers");
  workers->set_i(2);
  return net;
}

const std::vector<std::pair<std::string, std::vector<int64_t>>> kMlpBlobs = {
    {"X", {4, 3}}, {"W1", {5, 3}}, {"b1", {5}}, {"W2", {2, 5}}, {"b2", {2}}, {"lw", {4, 2}}};

void FeedMlp(Workspace* ws, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (const auto& [name, dims] : kMlpBlobs) {
    Tensor* t = ws->CreateBlob(name);
    t->Resize(DType::kFloat32, dims);
    float* data = t->mutable_data<float>();
    for (int64_t i = 0; i < t->numel(); ++i) data[i] = uniform(rng);
  }
}

std::vector<float> Values(const Workspace& ws, const std::string& name) {
  const Tensor* t = ws.GetBlob(name);
  return std::vector<float>(t->data<float>(), t->data<float>() + t->numel());
}

TEST(AutodiffTest, MlpGradientsMatchFiniteDifferences) {
  constexpr uint64_t kSeed = 7;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  Workspace ws;
  FeedMlp(&ws, kSeed);
  NetDef train = MlpNet("train", "simple");
  const GradientMap grads = AddGradientOperators(&train, {"L"});
  ASSERT_TRUE(ws.CreateNet(train)->Run().ok());
  Net* forward = ws.CreateNet(MlpNet("forward", "simple"));
  for (const std::string name : {"W1", "b1", "W2", "b2", "X"}) {
    ASSERT_EQ(grads.at(name), name + "_grad");
    const std::vector<float> analytic = Values(ws, grads.at(name));
    float largest = 0;
    for (float g : analytic) largest = std::max(largest, std::abs(g));
    EXPECT_GT(largest, 0.05f) << name << ": a gradient this small checks nothing";
    EXPECT_TRUE(testing::CheckNetGradient(forward, &ws, name, "L", analytic));
    std::vector<float> doubled = analytic;
    for (float& g : doubled) g *= 2;
    EXPECT_FALSE(testing::CheckNetGradient(forward, &ws, name, "L", doubled)) << "checker too lax";
  }
}

TEST(AutodiffTest, MlpGradientsAreBitIdenticalOnOneAndTwoThreads) {
  constexpr uint64_t kSeed = 11;
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  Workspace simple_ws, dag_ws;
  FeedMlp(&simple_ws, kSeed);
  FeedMlp(&dag_ws, kSeed);
  NetDef simple = MlpNet("train", "simple");
  NetDef dag = MlpNet("train", "dag");
  const GradientMap grads = AddGradientOperators(&simple, {"L"});
  AddGradientOperators(&dag, {"L"});
  ASSERT_TRUE(simple_ws.CreateNet(simple)->Run().ok());
  Net* dag_net = dag_ws.CreateNet(dag);
  for (int run = 0; run < 3; ++run) {
    ASSERT_TRUE(dag_net->Run().ok());
    for (const auto& [blob, grad] : grads) {
      EXPECT_EQ(Values(simple_ws, grad), Values(dag_ws, grad)) << grad << " run " << run;
    }
  }
}

}  // namespace
}  // namespace braid
