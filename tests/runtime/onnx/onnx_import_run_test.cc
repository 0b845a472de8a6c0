// Imported ONNX models run on braid and match naive loops computed here (tolerance 1e-4 absolute,
// float32 sums of at most a few hundred terms of magnitude <= 1).
#include <gtest/gtest.h>

#include "braid/dtype.h"
#include "runtime/core/argument.h"
#include "runtime/core/workspace.h"
#include "runtime/onnx/naive_reference.h"
#include "runtime/onnx/onnx_test_graph.h"

namespace braid::test {
namespace {

constexpr float kTolerance = 1e-4f;

void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], kTolerance) << "element " << i;
  }
}

// Conv(3x3, pad 1, bias) -> BatchNormalization -> Relu -> MaxPool(2, stride 2) -> Flatten ->
// Gemm(transB=1) -> Softmax, the shape of a torchvision classifier.
struct SmallCnn {
  Nchw x{2, 2, 5, 5, TestValues(2 * 2 * 5 * 5, 1)};
  std::vector<float> filter = TestValues(3 * 2 * 3 * 3, 2), conv_bias = TestValues(3, 3);
  std::vector<float> scale = {1.5f, 0.5f, 2.f}, shift = TestValues(3, 4);
  std::vector<float> mean = TestValues(3, 5), var = {0.5f, 1.f, 2.f};
  std::vector<float> fc_w = TestValues(4 * 12, 6), fc_b = TestValues(4, 7);

  OnnxTestGraph Graph(int64_t opset) const {
    OnnxTestGraph g(opset);
    g.Input("input", {2, 2, 5, 5});
    g.Initializer("conv.weight", {3, 2, 3, 3}, filter);
    g.Initializer("conv.bias", {3}, conv_bias);
    g.Initializer("bn.weight", {3}, scale);
    g.Initializer("bn.bias", {3}, shift);
    g.Initializer("bn.running_mean", {3}, mean);
    g.Initializer("bn.running_var", {3}, var);
    g.Initializer("fc.weight", {4, 12}, fc_w);
    g.Initializer("fc.bias", {4}, fc_b);
    auto* conv = g.Node("Conv", {"input", "conv.weight", "conv.bias"}, {"c"});
    SetAttr(conv, "kernel_shape", std::vector<int64_t>{3, 3});
    SetAttr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
    auto* bn = g.Node("BatchNormalization",
                      {"c", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"}, {"b"});
    SetAttr(bn, "epsilon", 1e-3f);
    g.Node("Relu", {"b"}, {"r"});
    auto* pool = g.Node("MaxPool", {"r"}, {"p"});
    SetAttr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
    SetAttr(pool, "strides", std::vector<int64_t>{2, 2});
    g.Node("Flatten", {"p"}, {"f"});
    SetAttr(g.Node("Gemm", {"f", "fc.weight", "fc.bias"}, {"logits"}), "transB", int64_t{1});
    SetAttr(g.Node("Softmax", {"logits"}, {"prob"}), "axis", int64_t{1});
    g.Output("prob");
    return g;
  }

  std::vector<float> Expected() const {
    Nchw c = NaiveConv(x, filter, 3, 3, 3, conv_bias, 1, 1, 1, 1, 1);
    NaiveBatchNorm(&c, scale, shift, mean, var, 1e-3f);
    for (float& v : c.v) v = std::max(v, 0.f);
    const Nchw p = NaivePool(c, true, 2, 2, 0, 0, 0, 0, 2, 2, false);
    return NaiveSoftmaxRows(NaiveFc(p.v, 2, 12, fc_w, 4, fc_b), 4);
  }
};

TEST(OnnxImportRunTest, SmallCnnMatchesNaiveLoopsOnEveryOpset) {
  const SmallCnn cnn;
  for (int64_t opset : {9, 11, 13, 17}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    ExpectNear(RunImported(cnn.Graph(opset), cnn.x.v), cnn.Expected());
  }
}

TEST(OnnxImportRunTest, DagExecutorAndMemoryPlanComputeTheSameBits) {
  const SmallCnn cnn;
  const std::vector<float> simple = RunImported(cnn.Graph(13), cnn.x.v);
  RunSettings dag;
  dag.executor = "dag";
  dag.plan_memory = true;
  EXPECT_EQ(RunImported(cnn.Graph(13), cnn.x.v, dag), simple);
}

// Pad(1) -> Conv without pads, and Pad(1) -> AveragePool(count_include_pad=0), whose padded zeros
// still count: ONNX pads the data first.
TEST(OnnxImportRunTest, PadFoldsIntoConvAndAveragePoolCountingItsZeros) {
  const Nchw x{1, 1, 4, 4, TestValues(16, 11)};
  const std::vector<float> filter = TestValues(2 * 3 * 3, 12);
  for (const bool conv : {true, false}) {
    OnnxTestGraph g(13);
    g.Input("x", {1, 1, 4, 4});
    g.IntInitializer("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
    g.Initializer("w", {2, 1, 3, 3}, filter);
    g.Node("Pad", {"x", "pads"}, {"padded"});
    if (conv) {
      g.Node("Conv", {"padded", "w"}, {"y"});
    } else {
      auto* pool = g.Node("AveragePool", {"padded"}, {"y"});
      SetAttr(pool, "kernel_shape", std::vector<int64_t>{3, 3});
      SetAttr(pool, "strides", std::vector<int64_t>{2, 2});
    }
    g.Output("y");
    const std::vector<float> expected =
        conv ? NaiveConv(x, filter, 2, 3, 3, {}, 1, 1, 1, 1, 1).v
             : NaivePool(x, false, 3, 2, 1, 1, 1, 1, 2, 2, true).v;
    SCOPED_TRACE(conv ? "Conv" : "AveragePool");
    ExpectNear(RunImported(g, x.v), expected);
  }
}

// ceil_mode=1: 5 rows, window 2, stride 2 give 3 outputs (the last window half outside).
TEST(OnnxImportRunTest, CeilModePoolingKeepsThePartialLastWindow) {
  const Nchw x{1, 2, 5, 5, TestValues(50, 21)};
  for (const bool max : {true, false}) {
    OnnxTestGraph g(13);
    g.Input("x", {1, 2, 5, 5});
    auto* pool = g.Node(max ? "MaxPool" : "AveragePool", {"x"}, {"y"});
    SetAttr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
    SetAttr(pool, "strides", std::vector<int64_t>{2, 2});
    SetAttr(pool, "ceil_mode", int64_t{1});
    g.Output("y");
    SCOPED_TRACE(max ? "MaxPool" : "AveragePool");
    ExpectNear(RunImported(g, x.v), NaivePool(x, max, 2, 2, 0, 0, 0, 0, 3, 3, false).v);
  }
}

// Add of a constant [1, C, 1, 1] (ONNX broadcast) and Mul by a computed [N, C, 1, 1] scale (a
// squeeze-and-excitation block), then GlobalAveragePool.
TEST(OnnxImportRunTest, BroadcastAddAndMulMatchNumpyRules) {
  const Nchw x{2, 3, 2, 2, TestValues(24, 31)};
  const std::vector<float> shift = TestValues(3, 32);
  OnnxTestGraph g(13);
  g.Input("x", {2, 3, 2, 2});
  g.Initializer("shift", {1, 3, 1, 1}, shift);
  g.Node("Add", {"shift", "x"}, {"shifted"});
  g.Node("GlobalAveragePool", {"shifted"}, {"squeezed"});
  g.Node("Mul", {"shifted", "squeezed"}, {"y"});
  g.Output("y");
  std::vector<float> expected(24);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      double mean = 0;
      for (int64_t p = 0; p < 4; ++p) mean += (x.v[(i * 3 + j) * 4 + p] + shift[j]) / 4;
      for (int64_t p = 0; p < 4; ++p) {
        expected[(i * 3 + j) * 4 + p] = (x.v[(i * 3 + j) * 4 + p] + shift[j]) * mean;
      }
    }
  ExpectNear(RunImported(g, x.v), expected);
}

// Weights stored as float16 (raw bytes, or bits in int32_data) and cast to float by the graph, as
// exports that keep fp16 weights and compute in fp32 do: widened exactly at import.
TEST(OnnxImportRunTest, Float16WeightsAreWidenedExactly) {
  const std::vector<float> weights = {0.1f, -2.f, 65504.f};
  for (bool raw : {true, false}) {
    OnnxTestGraph g(13);
    g.Input("x", {1, 3});
    onnx::TensorProto* w = g.model().mutable_graph()->add_initializer();
    w->set_name("w");
    w->add_dims(1);
    w->add_dims(3);
    w->set_data_type(onnx::TensorProto::FLOAT16);
    std::string bytes;
    for (float v : weights) {
      const uint16_t bits = FloatToHalfBits(v);
      if (raw) {
        bytes.push_back(static_cast<char>(bits & 0xff));
        bytes.push_back(static_cast<char>(bits >> 8));
      } else {
        w->add_int32_data(bits);
      }
    }
    if (raw) w->set_raw_data(bytes);
    SetAttr(g.Node("Cast", {"w"}, {"wf"}), "to", int64_t{onnx::TensorProto::FLOAT});
    g.Node("Add", {"x", "wf"}, {"y"});
    g.Output("y");
    const std::vector<float> y = RunImported(g, {1.f, 2.f, 3.f});
    EXPECT_EQ(y, (std::vector<float>{1.f + static_cast<float>(Float16(0.1f)), 0.f, 65507.f}))
        << (raw ? "raw_data" : "int32_data");
  }
}

// Gemm with transB=0, alpha and beta, and MatMul by a constant: both become FC with the weight
// transposed (and scaled) at import.
TEST(OnnxImportRunTest, GemmAndMatMulWithUntransposedWeights) {
  const std::vector<float> x = TestValues(2 * 3, 41), b = TestValues(3 * 4, 42);
  const std::vector<float> c = TestValues(4, 43), m = TestValues(4 * 2, 44);
  OnnxTestGraph g(11);
  g.Input("x", {2, 3});
  g.Initializer("b", {3, 4}, b);
  g.Initializer("c", {4}, c);
  g.Initializer("m", {4, 2}, m);
  auto* gemm = g.Node("Gemm", {"x", "b", "c"}, {"h"});
  SetAttr(gemm, "alpha", 2.f);
  SetAttr(gemm, "beta", 0.5f);
  g.Node("MatMul", {"h", "m"}, {"y"});
  g.Output("y");
  std::vector<float> expected(2 * 2, 0.f), h(2 * 4);
  for (int i = 0; i < 2; ++i)
    for (int o = 0; o < 4; ++o) {
      double sum = 0.5 * c[o];
      for (int k = 0; k < 3; ++k) sum += 2.0 * x[i * 3 + k] * b[k * 4 + o];
      h[i * 4 + o] = static_cast<float>(sum);
    }
  for (int i = 0; i < 2; ++i)
    for (int o = 0; o < 2; ++o)
      for (int k = 0; k < 4; ++k) expected[i * 2 + o] += h[i * 4 + k] * m[k * 2 + o];
  ExpectNear(RunImported(g, x), expected);
}

// A weight whose elements the importer released once its fill op held them is read again as a
// constant by a later fold (MatMul transposes its constant B into FC's weight): same numbers.
TEST(OnnxImportRunTest, AWeightReadAgainByAFoldKeepsItsValues) {
  const std::vector<float> x = TestValues(4 * 4, 61), m = TestValues(4 * 4, 62);
  OnnxTestGraph g(13);
  g.Input("x", {4, 4});
  g.Initializer("m", {4, 4}, m);
  g.Node("Add", {"x", "m"}, {"a"});
  g.Node("MatMul", {"a", "m"}, {"y"});
  g.Output("y");
  std::vector<float> expected(4 * 4, 0.f);
  for (int i = 0; i < 4; ++i)
    for (int o = 0; o < 4; ++o)
      for (int k = 0; k < 4; ++k) expected[i * 4 + o] += (x[i * 4 + k] + m[i * 4 + k]) * m[k * 4 + o];
  ExpectNear(RunImported(g, x), expected);
}

// torchvision's older `x.view(x.size(0), -1)`: Shape -> Gather -> Unsqueeze -> Concat -> Reshape,
// folded into one Reshape; a Dropout in between vanishes.
TEST(OnnxImportRunTest, ShapeChainFoldsIntoOneReshape) {
  for (int64_t opset : {9, 13}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    OnnxTestGraph g(opset);
    g.Input("x", {2, 3, 2, 2});
    g.IntInitializer("zero", {}, {0});
    g.IntInitializer("minus_one", {1}, {-1});
    g.Node("Shape", {"x"}, {"shape"});
    SetAttr(g.Node("Gather", {"shape", "zero"}, {"batch"}), "axis", int64_t{0});
    if (opset < 13) {
      SetAttr(g.Node("Unsqueeze", {"batch"}, {"batch1"}), "axes", std::vector<int64_t>{0});
    } else {
      g.IntInitializer("axes", {1}, {0});
      g.Node("Unsqueeze", {"batch", "axes"}, {"batch1"});
    }
    SetAttr(g.Node("Concat", {"batch1", "minus_one"}, {"new_shape"}), "axis", int64_t{0});
    g.Node("Dropout", {"x"}, {"dropped"});
    g.Node("Reshape", {"dropped", "new_shape"}, {"y"});
    g.Output("y");
    const ModelFolder model = Import(g);
    ASSERT_EQ(model.predict_net.op_size(), 1);
    EXPECT_EQ(model.predict_net.op(0).type(), "Reshape");
    EXPECT_EQ(model.predict_net.op(0).input(0), "x");
    EXPECT_EQ(model.init_net.op_size(), 0);
    const std::vector<float> x = TestValues(24, 51);
    EXPECT_EQ(RunImported(g, x), x);
    // The folded batch is written as "copy dim 0", so the net takes other batch sizes too.
    EXPECT_EQ(ArgumentReader(model.predict_net.op(0).arg()).GetList<int64_t>("shape"),
              (std::vector<int64_t>{0, -1}));
    Workspace ws;
    ASSERT_TRUE(ws.RunNetOnce(model.init_net).ok());
    Tensor* five = ws.CreateBlob("x");
    five->Resize(DType::kFloat32, {5, 3, 2, 2});
    const std::vector<float> values = TestValues(60, 52);
    std::copy(values.begin(), values.end(), five->mutable_data<float>());
    ASSERT_TRUE(ws.RunNetOnce(model.predict_net).ok());
    EXPECT_EQ(ws.GetBlob("y")->shape(), (std::vector<int64_t>{5, 12}));
  }
}

}  // namespace
}  // namespace braid::test
