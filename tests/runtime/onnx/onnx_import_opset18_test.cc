// Models of opsets 18 to 21 (what PyTorch 2.x's exporter writes): the forms those opsets gave
// ReduceMean, Split, Pad, Resize and Cast import and compute what loops here compute, and what
// braid cannot compute is refused naming the node, its op type, the opset and the attribute or
// input (runtime/io/onnx/onnx_opset_lowering.h).
#include <gtest/gtest.h>

#include <algorithm>

#include "runtime/onnx/naive_reference.h"
#include "runtime/onnx/onnx_test_graph.h"

namespace braid::test {
namespace {

constexpr float kTolerance = 1e-5f;

void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i], kTolerance) << "element " << i;
  }
}

std::string ImportError(const OnnxTestGraph& graph) {
  ModelFolder model;
  const Status status = ImportOnnxBytes(graph.Bytes(), "model.onnx", {}, &model);
  EXPECT_FALSE(status.ok());
  return status.message();
}

void ExpectErrorHas(const OnnxTestGraph& graph, const std::vector<std::string>& parts) {
  const std::string error = ImportError(graph);
  for (const std::string& part : parts) {
    EXPECT_NE(error.find(part), std::string::npos) << "'" << part << "' not in: " << error;
  }
}

// The mean of x [n, c, h, w] over h and w, [n, c] in row-major order.
std::vector<float> MeansOverHw(const std::vector<float>& x, int64_t nc, int64_t hw) {
  std::vector<float> means(nc, 0.f);
  for (int64_t i = 0; i < nc; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < hw; ++j) sum += x[i * hw + j];
    means[i] = static_cast<float>(sum / hw);
  }
  return means;
}

TEST(OnnxOpset18Test, EveryOpsetFromEighteenToTwentyOneImports) {
  const std::vector<float> x = {-1.f, 2.f, -3.f, 4.f};
  for (int64_t opset = 18; opset <= 21; ++opset) {
    OnnxTestGraph g(opset);
    g.Input("x", {1, 4});
    g.Node("Relu", {"x"}, {"y"});
    g.Output("y");
    SCOPED_TRACE("opset " + std::to_string(opset));
    ExpectNear(RunImported(g, x), {0.f, 2.f, 0.f, 4.f});
  }
}

// ReduceMean's axes: an attribute at 13, an input (an initializer or a Constant node) from 18.
TEST(OnnxOpset18Test, ReduceMeanAxesInputMatchesTheAttributeOfOpset13) {
  const std::vector<float> x = TestValues(2 * 3 * 2 * 2, 31);
  const std::vector<float> expected = MeansOverHw(x, 6, 4);
  OnnxTestGraph attr(13);
  attr.Input("x", {2, 3, 2, 2});
  auto* node = attr.Node("ReduceMean", {"x"}, {"y"});
  SetAttr(node, "axes", std::vector<int64_t>{2, 3});
  SetAttr(node, "keepdims", int64_t{0});
  attr.Output("y");
  OnnxTestGraph initializer(18);
  initializer.Input("x", {2, 3, 2, 2});
  initializer.IntInitializer("axes", {2}, {-1, 2});
  SetAttr(initializer.Node("ReduceMean", {"x", "axes"}, {"y"}), "keepdims", int64_t{0});
  initializer.Output("y");
  OnnxTestGraph constant_node(21);
  constant_node.Input("x", {2, 3, 2, 2});
  SetAttr(constant_node.Node("Constant", {}, {"axes"}), "value_ints", std::vector<int64_t>{2, 3});
  constant_node.Node("ReduceMean", {"x", "axes"}, {"m"});  // keepdims=1: [2, 3, 1, 1]
  constant_node.Node("Flatten", {"m"}, {"y"});
  constant_node.Output("y");
  for (const OnnxTestGraph* g : {&attr, &initializer, &constant_node}) {
    SCOPED_TRACE("opset " + std::to_string(g == &attr ? 13 : g == &initializer ? 18 : 21));
    ExpectNear(RunImported(*g, x), expected);
  }
}

// No axes: the mean of everything, or, with noop_with_empty_axes=1, the input unchanged.
TEST(OnnxOpset18Test, ReduceMeanWithoutAxesReducesAllOrNothing) {
  const std::vector<float> x = TestValues(6, 32);
  double sum = 0;
  for (float v : x) sum += v;
  for (const int64_t noop : {0, 1}) {
    OnnxTestGraph g(18);
    g.Input("x", {2, 3});  // reducing one axis only would give 2 or 3 values, not 1
    SetAttr(g.Node("ReduceMean", {"x"}, {"y"}), "noop_with_empty_axes", noop);
    g.Output("y");
    SCOPED_TRACE("noop_with_empty_axes " + std::to_string(noop));
    ExpectNear(RunImported(g, x), noop ? x : std::vector<float>{static_cast<float>(sum / 6)});
  }
}

// ReduceSum took its axes as an input already at 13; opset 11 has the attribute.
TEST(OnnxOpset18Test, ReduceSumAxesByOpset) {
  const std::vector<float> x = TestValues(2 * 3, 33);
  const std::vector<float> expected = {x[0] + x[1] + x[2], x[3] + x[4] + x[5]};
  for (const int64_t opset : {11, 13, 20}) {
    OnnxTestGraph g(opset);
    g.Input("x", {2, 3});
    onnx::NodeProto* node;
    if (opset < 13) {
      node = g.Node("ReduceSum", {"x"}, {"y"});
      SetAttr(node, "axes", std::vector<int64_t>{1});
    } else {
      g.IntInitializer("axes", {1}, {-1});
      node = g.Node("ReduceSum", {"x", "axes"}, {"y"});
    }
    SetAttr(node, "keepdims", int64_t{0});
    g.Output("y");
    SCOPED_TRACE("opset " + std::to_string(opset));
    ExpectNear(RunImported(g, x), expected);
  }
}

TEST(OnnxOpset18Test, ReduceAxesThatAreNoConstantAreRefusedNamingNodeOpsetAndInput) {
  OnnxTestGraph g(18);
  g.Input("x", {1, 2, 3, 4});
  g.IntInitializer("two", {1}, {2});
  g.Node("Shape", {"x"}, {"dims"});
  g.Node("Gather", {"dims", "two"}, {"axes"});  // computed: ReduceMean-18 may take any tensor
  g.Node("ReduceMean", {"x", "axes"}, {"y"})->set_name("mean");
  g.Output("y");
  EXPECT_EQ(ImportError(g),
            "model.onnx: node #2 (ReduceMean 'mean'): opset 18: input 1 'axes' ('axes') must be "
            "a constant (an initializer or a Constant node)");
}

// x [1, 5, 1, 2] cut along C, then joined back in the other order: channels [a..., b...] become
// [b..., a...].
std::vector<float> SwapParts(const std::vector<float>& x, int64_t first_channels) {
  const int64_t cut = first_channels * 2;
  std::vector<float> y(x.begin() + cut, x.end());
  y.insert(y.end(), x.begin(), x.begin() + cut);
  return y;
}

OnnxTestGraph SplitAndSwap(int64_t opset, int64_t channels, const std::string& before) {
  OnnxTestGraph g(opset);
  g.Input("x", {1, channels, 1, 2});
  std::string input = "x";
  if (!before.empty()) {
    g.Node(before, {"x"}, {"r"});  // a value whose shape the model does not declare
    input = "r";
  }
  SetAttr(g.Node("Split", {input}, {"a", "b"}), "axis", int64_t{1});
  SetAttr(g.Node("Concat", {"b", "a"}, {"y"}), "axis", int64_t{1});
  g.Output("y");
  return g;
}

// Split-18's num_outputs: parts of ceil(dim / n), the last one smaller (5 -> 3 and 2).
TEST(OnnxOpset18Test, SplitNumOutputsCutsEqualAndUnequalParts) {
  for (const int64_t channels : {4, 5}) {
    const std::vector<float> x = TestValues(channels * 2, 34);
    OnnxTestGraph g = SplitAndSwap(18, channels, "");
    SetAttr(g.model().mutable_graph()->mutable_node(0), "num_outputs", int64_t{2});
    SCOPED_TRACE(std::to_string(channels) + " channels");
    ExpectNear(RunImported(g, x), SwapParts(x, (channels + 1) / 2));
  }
  // The undeclared shape of a Relu's output is inferred after the lowering: still 3 and 2.
  const std::vector<float> x = TestValues(10, 35);
  OnnxTestGraph undeclared = SplitAndSwap(18, 5, "Relu");
  SetAttr(undeclared.model().mutable_graph()->mutable_node(1), "num_outputs", int64_t{2});
  std::vector<float> relu = x;
  for (float& v : relu) v = std::max(v, 0.f);
  ExpectNear(RunImported(undeclared, x), SwapParts(relu, 3));
  OnnxTestGraph sizes = SplitAndSwap(13, 5, "");  // the `split` input of opsets 13 to 17
  sizes.IntInitializer("sizes", {2}, {1, 4});
  sizes.model().mutable_graph()->mutable_node(0)->add_input("sizes");
  ExpectNear(RunImported(sizes, x), SwapParts(x, 1));
}

// The model declares x [1, 4, 1, 2] (an even split); the input_shape option makes it
// [1, 5, 1, 2], and the parts are cut from that shape: 3 and 2 channels.
TEST(OnnxOpset18Test, SplitNumOutputsFollowsTheInputShapeOption) {
  OnnxTestGraph g = SplitAndSwap(18, 4, "");
  SetAttr(g.model().mutable_graph()->mutable_node(0), "num_outputs", int64_t{2});
  RunSettings settings;
  settings.import_options.input_shape = {1, 5, 1, 2};
  const std::vector<float> x = TestValues(10, 38);
  ExpectNear(RunImported(g, x, settings), SwapParts(x, 3));
}

TEST(OnnxOpset18Test, SplitNumOutputsBraidCannotCutAreRefused) {
  OnnxTestGraph wrong_count = SplitAndSwap(18, 4, "");
  SetAttr(wrong_count.model().mutable_graph()->mutable_node(0), "num_outputs", int64_t{3});
  ExpectErrorHas(wrong_count, {"node #0 (Split 'Split_0'): opset 18: attribute 'num_outputs' is "
                               "3 but the node has 2 outputs"});
  OnnxTestGraph zero = SplitAndSwap(18, 4, "");
  SetAttr(zero.model().mutable_graph()->mutable_node(0), "num_outputs", int64_t{0});
  ExpectErrorHas(zero, {"attribute 'num_outputs' is 0 but the node has 2 outputs"});
  OnnxTestGraph too_large = SplitAndSwap(13, 5, "");
  too_large.IntInitializer("sizes", {2}, {int64_t{1} << 62, int64_t{1} << 62});
  too_large.model().mutable_graph()->mutable_node(0)->add_input("sizes");
  ExpectErrorHas(too_large, {"split sizes [4611686018427387904,4611686018427387904] do not cut "
                             "dim 1 of [1,5,1,2] into 2 parts"});
  // 4 channels in 3 parts of ceil(4 / 3) = 2 leave the last part empty.
  OnnxTestGraph empty_last(18);
  empty_last.Input("x", {1, 4, 1, 2});
  auto* split = empty_last.Node("Split", {"x"}, {"a", "b", "c"});
  SetAttr(split, "axis", int64_t{1});
  SetAttr(split, "num_outputs", int64_t{3});
  SetAttr(empty_last.Node("Concat", {"c", "b", "a"}, {"y"}), "axis", int64_t{1});
  empty_last.Output("y");
  ExpectErrorHas(empty_last, {"node #0 (Split 'Split_0'): opset 18: attribute 'num_outputs' 3 "
                              "leaves the last part of dim 1 (4) empty"});
}

// Pad-18's axes input: pads for H and W only, widened to NCHW and folded into the AveragePool.
TEST(OnnxOpset18Test, PadAxesInputWidensToEveryAxis) {
  const Nchw x{1, 1, 4, 4, TestValues(16, 36)};
  OnnxTestGraph g(18);
  g.Input("x", {1, 1, 4, 4});
  // H: 1 before, 0 after; W: 0 before, 2 after (so swapping begins and ends changes y).
  g.IntInitializer("pads", {4}, {1, 0, 0, 2});
  g.IntInitializer("axes", {2}, {-2, 3});
  g.Node("Pad", {"x", "pads", "", "axes"}, {"padded"});
  auto* pool = g.Node("AveragePool", {"padded"}, {"y"});
  SetAttr(pool, "kernel_shape", std::vector<int64_t>{3, 3});
  SetAttr(pool, "strides", std::vector<int64_t>{2, 2});
  g.Output("y");
  ExpectNear(RunImported(g, x.v), NaivePool(x, false, 3, 2, 1, 0, 0, 2, 2, 2, true).v);
}

TEST(OnnxOpset18Test, PadModesOtherThanConstantAreRefused) {
  OnnxTestGraph g(19);
  g.Input("x", {1, 1, 4, 4});
  g.IntInitializer("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  SetAttr(g.Node("Pad", {"x", "pads"}, {"padded"}), "mode", std::string("wrap"));
  g.Node("Relu", {"padded"}, {"y"});
  g.Output("y");
  ExpectErrorHas(g, {"node #0 (Pad 'Pad_0'): opset 19: attribute 'mode' 'wrap' is not supported, "
                     "only 'constant'"});
}

// x [1, 2, 2, 3] -> y [1, 2, 4, 9], y[.., i, j] = x[.., i / 2, j / 3] (nearest, asymmetric,
// floor): H scaled by 2, W by 3, so scales applied to the wrong axes give other values.
std::vector<float> Upsampled2x3(const std::vector<float>& x) {
  std::vector<float> y;
  for (int c = 0; c < 2; ++c) {
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 9; ++j) y.push_back(x[c * 6 + (i / 2) * 3 + j / 3]);
    }
  }
  return y;
}

onnx::NodeProto* ResizeNode(OnnxTestGraph* g, const std::vector<std::string>& inputs) {
  g->Input("x", {1, 2, 2, 3});
  onnx::NodeProto* node = g->Node("Resize", inputs, {"y"});
  SetAttr(node, "mode", std::string("nearest"));
  SetAttr(node, "coordinate_transformation_mode", std::string("asymmetric"));
  SetAttr(node, "nearest_mode", std::string("floor"));
  g->Output("y");
  return node;
}

// PyTorch's nearest upsampling by scales (13; 18 with its new attributes at their defaults, and
// with axes) or by sizes (18).
TEST(OnnxOpset18Test, ResizeNearestByScalesSizesOrAxes) {
  const std::vector<float> x = TestValues(12, 37);
  OnnxTestGraph scales13(13), scales18(18), sizes18(18), axes18(18);
  scales13.Initializer("scales", {4}, {1.f, 1.f, 2.f, 3.f});
  ResizeNode(&scales13, {"x", "", "scales"});
  scales18.Initializer("scales", {4}, {1.f, 1.f, 2.f, 3.f});
  onnx::NodeProto* node = ResizeNode(&scales18, {"x", "", "scales"});
  SetAttr(node, "antialias", int64_t{0});
  SetAttr(node, "keep_aspect_ratio_policy", std::string("not_larger"));  // ignored with scales
  sizes18.IntInitializer("sizes", {4}, {1, 2, 4, 9});
  SetAttr(ResizeNode(&sizes18, {"x", "", "", "sizes"}), "keep_aspect_ratio_policy",
          std::string("stretch"));
  axes18.Initializer("scales", {2}, {2.f, 3.f});
  SetAttr(ResizeNode(&axes18, {"x", "", "scales"}), "axes", std::vector<int64_t>{2, -1});
  int index = 0;
  for (const OnnxTestGraph* g : {&scales13, &scales18, &sizes18, &axes18}) {
    SCOPED_TRACE("graph " + std::to_string(index++));
    ExpectNear(RunImported(*g, x), Upsampled2x3(x));
  }
}

TEST(OnnxOpset18Test, ResizeFeaturesBraidCannotComputeAreRefused) {
  const auto refused = [](int64_t opset, const std::string& attr, const std::string& value,
                          const std::string& message) {
    OnnxTestGraph g(opset);
    g.Initializer("scales", {4}, {1.f, 1.f, 2.f, 2.f});
    onnx::NodeProto* node = ResizeNode(&g, {"x", "", "scales"});
    node->set_name("up");
    if (attr == "antialias") {
      SetAttr(node, attr, int64_t{1});
    } else {
      node->mutable_attribute()->erase(
          std::remove_if(node->mutable_attribute()->begin(), node->mutable_attribute()->end(),
                         [&](const onnx::AttributeProto& a) { return a.name() == attr; }),
          node->mutable_attribute()->end());
      if (!value.empty()) SetAttr(node, attr, value);
    }
    SCOPED_TRACE(attr + " " + value);
    ExpectErrorHas(g, {"model.onnx: node #0 (Resize 'up'): " + message});
  };
  refused(18, "antialias", "", "opset 18: attribute 'antialias' = 1 is not supported");
  refused(19, "coordinate_transformation_mode", "half_pixel_symmetric",
          "opset 19: attribute 'coordinate_transformation_mode' 'half_pixel_symmetric' is not");
  refused(13, "mode", "linear", "opset 13: attribute 'mode' 'linear' is not supported");
  refused(
      13, "coordinate_transformation_mode", "",
      "opset 13: attribute 'coordinate_transformation_mode' 'half_pixel' is not supported; braid "
      "imports Resize as ResizeNearest");
  refused(20, "nearest_mode", "round_prefer_ceil",
          "opset 20: attribute 'nearest_mode' 'round_prefer_ceil' is not supported");
  OnnxTestGraph huge(13);
  huge.Initializer("scales", {4}, {1.f, 1.f, 1e13f, 2.f});
  ResizeNode(&huge, {"x", "", "scales"});
  ExpectErrorHas(huge,
                 {"node #0 (Resize 'Resize_0'): opset 13: resizing [1,2,2,3] by ", "gives dims beyond 1e12"});
  OnnxTestGraph sizes(18);
  sizes.IntInitializer("sizes", {4}, {1, 2, 4, 6});
  SetAttr(ResizeNode(&sizes, {"x", "", "", "sizes"}), "keep_aspect_ratio_policy",
          std::string("not_smaller"));
  ExpectErrorHas(sizes, {"node #0 (Resize 'Resize_0'): opset 18: attribute "
                         "'keep_aspect_ratio_policy' 'not_smaller' with input 3 'sizes' is not "
                         "supported"});
}

TEST(OnnxOpset18Test, PadAndResizeAxesNamedTwiceAreRefused) {
  OnnxTestGraph pad(18);
  pad.Input("x", {1, 1, 4, 4});
  pad.IntInitializer("pads", {4}, {1, 0, 0, 2});
  pad.IntInitializer("axes", {2}, {3, -1});
  pad.Node("Pad", {"x", "pads", "", "axes"}, {"padded"});
  SetAttr(pad.Node("AveragePool", {"padded"}, {"y"}), "kernel_shape",
          std::vector<int64_t>{3, 3});
  pad.Output("y");
  ExpectErrorHas(pad, {"node #0 (Pad 'Pad_0'): opset 18: input 3 'axes' names axis 3 twice "
                       "[3,-1]"});
  OnnxTestGraph resize(18);
  resize.Initializer("scales", {2}, {2.f, 3.f});
  SetAttr(ResizeNode(&resize, {"x", "", "scales"}), "axes", std::vector<int64_t>{2, -2});
  ExpectErrorHas(resize, {"node #0 (Resize 'Resize_0'): opset 18: attribute 'axes' names axis 2 "
                          "twice [2,-2]"});
}

// Every converter's refusal names the model's opset once, in the lowering's wording: a reduce's
// axis (NormalizeAxis), a Split's axis, a Resize's scales, a Cast of a computed value.
TEST(OnnxOpset18Test, ConverterRefusalsNameTheOpsetOnce) {
  OnnxTestGraph reduce(13);
  reduce.Input("x", {2, 3});
  SetAttr(reduce.Node("ReduceMean", {"x"}, {"y"}), "axes", std::vector<int64_t>{5});
  reduce.Output("y");
  OnnxTestGraph split(13);
  split.Input("x", {1, 4});
  SetAttr(split.Node("Split", {"x"}, {"a", "b"}), "axis", int64_t{4});
  split.Node("Concat", {"b", "a"}, {"y"});
  split.Output("y");
  OnnxTestGraph resize(13);
  resize.Initializer("scales", {4}, {2.f, 1.f, 2.f, 2.f});
  ResizeNode(&resize, {"x", "", "scales"});
  OnnxTestGraph cast(13);
  cast.Input("x", {1, 3});
  SetAttr(cast.Node("Cast", {"x"}, {"i"}), "to", int64_t{onnx::TensorProto::INT64});
  SetAttr(cast.Node("Cast", {"i"}, {"y"}), "to", int64_t{onnx::TensorProto::FLOAT});
  cast.Output("y");
  const std::vector<std::pair<const OnnxTestGraph*, std::string>> cases = {
      {&reduce, "node #0 (ReduceMean 'ReduceMean_0'): opset 13: ReduceMean axis 5 is outside"},
      {&split, "node #0 (Split 'Split_0'): opset 13: Split axis 4 is outside"},
      {&resize, "node #0 (Resize 'Resize_0'): opset 13: scales [4 values] must be [1, 1, h, w]"},
      {&cast, "node #0 (Cast 'Cast_0'): opset 13: Cast of a computed value to type 7"},
  };
  for (const auto& [graph, message] : cases) {
    const std::string error = ImportError(*graph);
    EXPECT_NE(error.find(message), std::string::npos) << error;
    EXPECT_EQ(error.find("opset"), error.rfind("opset")) << error;
  }
}

// A constant cast to bool holds 0 or 1, whatever its magnitude; opset 19's `saturate` is accepted.
TEST(OnnxOpset18Test, CastOfAConstantToBoolGivesZeroOrOne) {
  OnnxTestGraph g(19);
  g.Input("x", {1, 3});
  g.Initializer("mask", {1, 3}, {2.5f, 0.f, -3.f});
  auto* to_bool = g.Node("Cast", {"mask"}, {"b"});
  SetAttr(to_bool, "to", int64_t{onnx::TensorProto::BOOL});
  SetAttr(to_bool, "saturate", int64_t{1});
  SetAttr(g.Node("Cast", {"b"}, {"f"}), "to", int64_t{onnx::TensorProto::FLOAT});
  g.Node("Mul", {"x", "f"}, {"y"});
  g.Output("y");
  ExpectNear(RunImported(g, {4.f, 5.f, 6.f}), {4.f, 0.f, 6.f});
}

// Integer casts of constants wrap modulo 2^bits as ONNX's reference and numpy do:
// numpy.array([-1, 300, 200, -129]).astype(t) for t = uint8, int8, uint16, int16, int32.
TEST(OnnxOpset18Test, CastOfAConstantToANarrowIntegerWraps) {
  const std::vector<std::pair<int64_t, std::vector<float>>> cases = {
      {onnx::TensorProto::UINT8, {255.f, 44.f, 200.f, 127.f}},
      {onnx::TensorProto::INT8, {-1.f, 44.f, -56.f, 127.f}},
      {onnx::TensorProto::UINT16, {65535.f, 300.f, 200.f, 65407.f}},
      {onnx::TensorProto::INT16, {-1.f, 300.f, 200.f, -129.f}},
      {onnx::TensorProto::INT32, {-1.f, 300.f, 200.f, -129.f}},
  };
  for (const auto& [to, expected] : cases) {
    OnnxTestGraph g(19);
    g.Input("x", {1, 4});
    g.IntInitializer("c", {1, 4}, {-1, 300, 200, -129});
    SetAttr(g.Node("Cast", {"c"}, {"n"}), "to", to);
    SetAttr(g.Node("Cast", {"n"}, {"f"}), "to", int64_t{onnx::TensorProto::FLOAT});
    g.Node("Mul", {"x", "f"}, {"y"});
    g.Output("y");
    SCOPED_TRACE("to " + std::to_string(to));
    ExpectNear(RunImported(g, {1.f, 1.f, 1.f, 1.f}), expected);
  }
}

TEST(OnnxOpset18Test, CastOfAConstantToATypeBraidDoesNotHoldIsRefused) {
  for (const int64_t to : {int64_t{onnx::TensorProto::FLOAT16}, int64_t{17} /* float8e4m3fn */}) {
    OnnxTestGraph g(21);
    g.Input("x", {1, 3});
    g.Initializer("c", {1, 3}, {1.f, 2.f, 3.f});
    SetAttr(g.Node("Cast", {"c"}, {"h"}), "to", to);
    g.Node("Mul", {"x", "h"}, {"y"});
    g.Output("y");
    ExpectErrorHas(g, {"node #0 (Cast 'Cast_0'): opset 21: attribute 'to' is ONNX type " +
                       std::to_string(to) + ", which braid does not fold"});
  }
}

}  // namespace
}  // namespace braid::test
