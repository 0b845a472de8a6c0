// An application's own ops through the public API (include/braid/custom_op.h): a leaky scale
// y = x > 0 ? x : alpha * x with its own gradient op, registered at static initialisation; its
// values on cpu and sim, its gradient against finite differences, a net trained through it by the
// public Trainer, and the errors: a kernel refusing its input, registrations braid refuses, and
// training through a custom op without a gradient.
#include "braid/custom_op.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "braid/trainer.h"
#include "proto/braid.pb.h"
#include "runtime/core/tensor.h"
#include "runtime/core/workspace.h"
#include "testing/gradient_checker.h"
#include "testing/host_copies.h"
#include "testing/net_text.h"

namespace braid {
namespace {

using braid::testing::NetFromText;

Status SameTypeAndShape(const OperatorDef&, const std::vector<TensorType>& in,
                        std::vector<TensorType>* out) {
  *out = {in[0]};
  return Status::OK();
}

// y = x > 0 ? x : alpha * x
CustomOp LeakyScale() {
  CustomOp op;
  op.type = "TestLeakyScale";
  op.args = {"alpha"};
  op.allow_inplace = {{0, 0}};
  op.doc = "y = x > 0 ? x : alpha * x";
  op.infer = SameTypeAndShape;
  op.run_cpu = [](OpContext& ctx) {
    const ConstTensorRef x = ctx.input(0);
    if (x.dtype() != DType::kFloat32) return ctx.Invalid("TestLeakyScale takes float32");
    const float alpha = ctx.arg<float>("alpha", 0.1f);
    const float* in = x.data<float>();
    float* y = ctx.output(0, DType::kFloat32, x.shape()).data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) y[i] = in[i] > 0 ? in[i] : alpha * in[i];
    return Status::OK();
  };
  op.gradient = [](const GradientOpsRequest& r, GradientOpsReply* reply) {
    reply->ops = {GradientOp(r.op, "TestLeakyScaleGradient", {r.op.input(0), r.output_grads[0]},
                             {r.input_grads[0]})};
    reply->has_input_grad = {true};
    return Status::OK();
  };
  return op;
}

// dx = x > 0 ? dy : alpha * dy
CustomOp LeakyScaleGradient() {
  CustomOp op;
  op.type = "TestLeakyScaleGradient";
  op.min_inputs = op.max_inputs = 2;
  op.args = {"alpha"};
  op.infer = SameTypeAndShape;
  op.run_cpu = [](OpContext& ctx) {
    const ConstTensorRef x = ctx.input(0), dy = ctx.input(1);
    const float alpha = ctx.arg<float>("alpha", 0.1f);
    float* dx = ctx.output(0, DType::kFloat32, x.shape()).data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      dx[i] = x.data<float>()[i] > 0 ? dy.data<float>()[i] : alpha * dy.data<float>()[i];
    }
    return Status::OK();
  };
  op.no_gradient = true;
  return op;
}

CustomOp Opaque() {  // a kernel and nothing said of its gradient
  CustomOp op;
  op.type = "TestOpaque";
  op.infer = SameTypeAndShape;
  op.run_cpu = [](OpContext& ctx) {
    const ConstTensorRef x = ctx.input(0);
    float* y = ctx.output(0, x.dtype(), x.shape()).data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) y[i] = x.data<float>()[i];
    return Status::OK();
  };
  return op;
}

BRAID_REGISTER_CUSTOM_OP(LeakyScale());
BRAID_REGISTER_CUSTOM_OP(LeakyScaleGradient());
BRAID_REGISTER_CUSTOM_OP(Opaque());

void Feed(Workspace* ws, const std::string& name, std::vector<int64_t> shape,
          const std::vector<float>& values) {
  Tensor* t = ws->CreateBlob(name);
  t->Resize(DType::kFloat32, shape);
  std::copy(values.begin(), values.end(), t->mutable_data<float>());
}

TEST(CustomOpTest, RunsOnCpuAndSimWithItsArguments) {
  for (const char* device : {"", R"(device_option { device_type: 1000 device_id: 0 })"}) {
    SCOPED_TRACE(*device ? "sim:0" : "cpu:0");
    Workspace ws;
    Feed(&ws, "x", {2, 2}, {1, -2, 0.5f, -4});
    const Status s = ws.RunNetOnce(NetFromText(std::string(R"(name: "leaky"
        op { type: "Copy" input: "x" output: "x_here" )") +
                                               device + R"( }
        op { type: "TestLeakyScale" input: "x_here" output: "y" arg { name: "alpha" f: 0.25 } )" +
                                               device + " }"));
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(HostFloats(*ws.GetBlob("y")), (std::vector<float>{1, -0.5f, 0.5f, -1}));
  }
}

TEST(CustomOpTest, ItsGradientMatchesFiniteDifferences) {
  Workspace ws;
  Feed(&ws, "x", {3, 4}, {0.5f, -0.7f, 1.2f, -1.5f, 0.3f, -0.2f, 2, -3, 0.9f, -0.4f, 0.8f, -1});
  EXPECT_TRUE(braid::testing::CheckGradient(
      NetFromText(R"(op { type: "TestLeakyScale" input: "x" output: "y"
                          arg { name: "alpha" f: 0.3 } })")
          .op(0),
      &ws));
}

// data [N, 1, 8, 8] -> FC 16 -> TestLeakyScale -> FC 4 -> logits, by the public Trainer.
TEST(CustomOpTest, APublicTrainerTrainsANetThroughIt) {
  const NetDef init = NetFromText(R"(name: "leaky_init"
      op { type: "XavierFill" output: "fc1_w" arg { name: "shape" ints: [16, 64] } }
      op { type: "ConstantFill" output: "fc1_b" arg { name: "shape" ints: [16] } }
      op { type: "XavierFill" output: "fc2_w" arg { name: "shape" ints: [4, 16] } }
      op { type: "ConstantFill" output: "fc2_b" arg { name: "shape" ints: [4] } })");
  const NetDef forward = NetFromText(R"(name: "leaky"
      op { type: "FC" input: "data" input: "fc1_w" input: "fc1_b" output: "fc1" }
      op { type: "TestLeakyScale" input: "fc1" output: "fc1" arg { name: "alpha" f: 0.1 } }
      op { type: "FC" input: "fc1" input: "fc2_w" input: "fc2_b" output: "logits" }
      external_output: "logits")");
  TrainerOptions o;
  o.net = {&init, &forward};
  o.data = "synthetic";
  o.synthetic = {
      .examples = 256, .test_examples = 128, .channels = 1, .image_size = 8, .classes = 4};
  o.batch_size = 32;
  o.test_batch_size = 64;
  o.iterations = 40;
  o.learning_rate = 0.05;
  o.learning_rate_policy.policy = "fixed";
  std::unique_ptr<Trainer> trainer;
  Status s = Trainer::Create(o, &trainer);
  ASSERT_TRUE(s.ok()) << s.ToString();
  int gradients = 0;
  for (const OperatorDef& op : trainer->train_net().op()) {
    gradients += op.type() == "TestLeakyScaleGradient" ? 1 : 0;
  }
  EXPECT_EQ(gradients, 1);
  double before = 0, loss = 0;
  ASSERT_TRUE(trainer->Evaluate(&before, &loss).ok());
  s = trainer->Run();
  ASSERT_TRUE(s.ok()) << s.ToString();
  double after = 0;
  ASSERT_TRUE(trainer->Evaluate(&after, &loss).ok());
  EXPECT_GT(after, 0.75) << "untrained " << before;
  EXPECT_GT(after, before + 0.3);
}

TEST(CustomOpTest, AKernelsRefusalIsTheNetsStatusNamingTheOp) {
  Workspace ws;
  Tensor* x = ws.CreateBlob("x");
  x->Resize(DType::kInt32, {2});
  x->mutable_data<int32_t>()[0] = 1;
  const Status s = ws.RunNetOnce(NetFromText(R"(name: "ints"
      op { type: "TestLeakyScale" input: "x" output: "y" name: "leaky" })"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("net 'ints' op #0 (TestLeakyScale 'leaky')"), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("TestLeakyScale takes float32 (kernel on cpu:0)"), std::string::npos)
      << s.ToString();
}

TEST(CustomOpTest, RegistrationsBraidCannotHonourAreRefusedByName) {
  CustomOp relu = Opaque();
  relu.type = "Relu";
  Status s = RegisterCustomOp(relu);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("op type 'Relu' is already registered"), std::string::npos);
  s = RegisterCustomOp(LeakyScale());
  EXPECT_NE(s.message().find("'TestLeakyScale' is already registered"), std::string::npos);

  CustomOp bad = Opaque();
  bad.type = "TestNoKernel";
  bad.run_cpu = nullptr;
  EXPECT_NE(RegisterCustomOp(bad).message().find("has no kernel"), std::string::npos);
  bad = Opaque();
  bad.type = "TestBadInplace";
  bad.allow_inplace = {{1, 0}};
  EXPECT_NE(RegisterCustomOp(bad).message().find("in-place pair {1, 0} is outside"),
            std::string::npos);
  bad = Opaque();
  bad.type = "TestTwiceNamedArg";
  bad.args = {"alpha", "alpha"};
  EXPECT_NE(RegisterCustomOp(bad).message().find("argument 'alpha' is named twice"),
            std::string::npos);
  bad = Opaque();
  bad.type = "TestBadArity";
  bad.min_inputs = 2;
  EXPECT_NE(RegisterCustomOp(bad).message().find("bad arity"), std::string::npos);
  // A refused registration registers nothing: the type can still be registered properly.
  CustomOp twice = Opaque();
  twice.type = "TestTwiceNamedArg";
  EXPECT_TRUE(RegisterCustomOp(twice).ok());
}

TEST(CustomOpTest, TrainingThroughAnOpWithoutAGradientNamesIt) {
  const NetDef init = NetFromText(R"(name: "opaque_init"
      op { type: "XavierFill" output: "fc_w" arg { name: "shape" ints: [4, 64] } }
      op { type: "ConstantFill" output: "fc_b" arg { name: "shape" ints: [4] } })");
  const NetDef forward = NetFromText(R"(name: "opaque"
      op { type: "FC" input: "data" input: "fc_w" input: "fc_b" output: "fc" }
      op { type: "TestOpaque" input: "fc" output: "logits" }
      external_output: "logits")");
  TrainerOptions o;
  o.net = {&init, &forward};
  o.data = "synthetic";
  o.synthetic = {.examples = 64, .test_examples = 32, .channels = 1, .image_size = 8, .classes = 4};
  o.batch_size = 32;
  o.iterations = 1;
  std::unique_ptr<Trainer> trainer;
  const Status s = Trainer::Create(o, &trainer);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("TestOpaque"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace braid
