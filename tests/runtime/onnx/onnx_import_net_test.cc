// The nets the ONNX importer writes, read op by op, and the errors it reports.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "runtime/core/argument.h"
#include "runtime/io/model_folder.h"
#include "runtime/onnx/onnx_test_graph.h"
#include "runtime/io/proto_io.h"

namespace braid::test {
namespace {

std::string ImportError(const OnnxTestGraph& graph) {
  ModelFolder model;
  const Status status = ImportOnnxBytes(graph.Bytes(), "model.onnx", {}, &model);
  EXPECT_FALSE(status.ok());
  return status.message();
}

TEST(OnnxImportNetTest, UnsupportedOpsAreListedInOneErrorWithCounts) {
  OnnxTestGraph g(13);
  g.Input("x", {1, 4});
  g.Node("LSTM", {"x"}, {"a"});
  g.Node("Einsum", {"a"}, {"b"});
  g.Node("LSTM", {"b"}, {"c"});
  g.Node("Relu", {"c"}, {"y"});
  g.Output("y");
  EXPECT_EQ(ImportError(g), "model.onnx: unsupported ONNX ops: Einsum x1, LSTM x2");
}

TEST(OnnxImportNetTest, OpsetsOutsideNineToTwentyOneAreRefused) {
  for (int64_t opset : {8, 22}) {
    OnnxTestGraph g(opset);
    g.Input("x", {1, 4});
    g.Node("Relu", {"x"}, {"y"});
    g.Output("y");
    EXPECT_NE(
        ImportError(g).find("opset " + std::to_string(opset) + " is outside the opsets 9 to 21"),
        std::string::npos);
  }
}

// Clip's bounds are attributes before opset 11 and optional inputs from 11 on.
TEST(OnnxImportNetTest, ClipBoundsFromAttributesOrInputsByOpset) {
  OnnxTestGraph old_clip(10);
  old_clip.Input("x", {1, 4});
  auto* node = old_clip.Node("Clip", {"x"}, {"y"});
  SetAttr(node, "min", 0.f);
  SetAttr(node, "max", 6.f);
  old_clip.Output("y");
  OnnxTestGraph new_clip(13);
  new_clip.Input("x", {1, 4});
  new_clip.Initializer("low", {}, {0.f});
  new_clip.Initializer("high", {}, {6.f});
  new_clip.Node("Clip", {"x", "low", "high"}, {"y"});
  new_clip.Output("y");
  for (const OnnxTestGraph* g : {&old_clip, &new_clip}) {
    const ModelFolder model = Import(*g);
    ASSERT_EQ(model.predict_net.op_size(), 1);
    const OperatorDef& op = model.predict_net.op(0);
    EXPECT_EQ(op.type(), "Clip");
    EXPECT_EQ(ArgumentReader(op.arg()).Get<float>("min", -1), 0.f);
    EXPECT_EQ(ArgumentReader(op.arg()).Get<float>("max", -1), 6.f);
    EXPECT_EQ(model.init_net.op_size(), 0);  // bounds are arguments, not weights
  }
  OnnxTestGraph only_max(13);  // min left out: no lower bound
  only_max.Input("x", {1, 4});
  only_max.Initializer("high", {}, {6.f});
  only_max.Node("Clip", {"x", "", "high"}, {"y"});
  only_max.Output("y");
  const ModelFolder model = Import(only_max);
  EXPECT_EQ(ArgumentReader(model.predict_net.op(0).arg()).Get<float>("min", 0),
            std::numeric_limits<float>::lowest());
}

// A bound must hold one element. An empty one used to reach a converter's out-of-range read,
// reported as the library's exception text; a converter's exception is now Internal (a bug).
TEST(OnnxImportNetTest, ClipBoundsThatAreNotOneElementAreRefusedNamingTheInput) {
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{0}, std::vector<int64_t>{2}}) {
    OnnxTestGraph g(13);
    g.Input("x", {1, 4});
    g.Initializer("low", dims, std::vector<float>(dims[0], 0.f));
    g.Node("Clip", {"x", "low"}, {"y"});
    g.Output("y");
    ModelFolder model;
    const Status status = ImportOnnxBytes(g.Bytes(), "model.onnx", {}, &model);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
    EXPECT_EQ(status.message(), "model.onnx: node #0 (Clip 'Clip_0'): opset 13: min (input 1 'low') must "
                                "hold one element; it holds " + std::to_string(dims[0]));
  }
}

// Inputs a fuzzer found reaching a converter's exception (now Internal): each is the model's
// mistake, an InvalidArgument naming the node.
TEST(OnnxImportNetTest, DegenerateProductsAndConcatsAreRefusedNamingTheNode) {
  OnnxTestGraph zero_k(13);  // B [0, 2^40]: no elements, but a bias of 2^40 floats
  zero_k.Input("x", {1, 0});
  zero_k.Initializer("b", {0, int64_t{1} << 40}, {});
  zero_k.Node("Gemm", {"x", "b"}, {"y"});
  zero_k.Output("y");
  OnnxTestGraph other_k(13);  // A's K 3, B's K 2
  other_k.Input("x", {1, 3});
  other_k.Initializer("b", {2, 4}, TestValues(8, 1));
  other_k.Node("Gemm", {"x", "b"}, {"y"});
  other_k.Output("y");
  OnnxTestGraph zero_matmul(13);
  zero_matmul.Input("x", {1, 0});
  zero_matmul.Initializer("b", {0, int64_t{1} << 40}, {});
  zero_matmul.Node("MatMul", {"x", "b"}, {"y"});
  zero_matmul.Output("y");
  OnnxTestGraph no_inputs(13);
  no_inputs.Input("x", {1, 4});
  no_inputs.Node("Concat", {}, {"c"});
  no_inputs.Node("Add", {"x", "c"}, {"y"});
  no_inputs.Output("y");
  for (const auto& [graph, expected] : std::vector<std::pair<const OnnxTestGraph*, std::string>>{
           {&zero_k, "node #0 (Gemm 'Gemm_0'): opset 13: Gemm of A [1,1] and B "
                     "[0,1099511627776] is not a product with K > 0"},  // the input's 0 is 1
           {&other_k, "node #0 (Gemm 'Gemm_0'): opset 13: Gemm of A [1,3] and B [2,4] is not a "
                      "product with K > 0"},
           {&zero_matmul, "node #0 (MatMul 'MatMul_0'): opset 13: MatMul of A [1,1] and B "
                          "[0,1099511627776] is not a product with a 2-D weight and K > 0"},
           // ONNX's shape inference refuses it first; the converter would too.
           {&no_inputs, "model.onnx: "}}) {
    ModelFolder model;
    const Status status = ImportOnnxBytes(graph->Bytes(), "model.onnx", {}, &model);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
    EXPECT_NE(status.message().find(expected), std::string::npos) << status.message();
  }
}

// Softmax's default axis is 1 (over all the dims from it) before opset 13, -1 from 13 on; an
// opset-13 softmax over a middle dim is refused.
TEST(OnnxImportNetTest, SoftmaxAxisFollowsTheOpset) {
  for (const auto& [opset, axis] : {std::pair<int64_t, int64_t>{11, 1}, {13, 2}}) {
    OnnxTestGraph g(opset);
    g.Input("x", {2, 3, 4});
    g.Node("Softmax", {"x"}, {"y"});
    g.Output("y");
    const ModelFolder model = Import(g);
    ASSERT_EQ(model.predict_net.op_size(), 1);
    EXPECT_EQ(ArgumentReader(model.predict_net.op(0).arg()).Get<int64_t>("axis", -1), axis);
  }
  OnnxTestGraph middle(13);
  middle.Input("x", {2, 3, 4});
  SetAttr(middle.Node("Softmax", {"x"}, {"y"}), "axis", int64_t{1});
  middle.Output("y");
  EXPECT_NE(ImportError(middle).find("node #0 (Softmax 'Softmax_0'): opset 13: Softmax over axis 1 "
                                     "of [2,3,4]"),
            std::string::npos);
}

// Conv pads [h_begin, w_begin, h_end, w_end] become pads [t, l, b, r]; weights are filled once in
// the init net and listed as external inputs after the data input.
TEST(OnnxImportNetTest, ConvArgumentsAndWeightsInZooLayout) {
  OnnxTestGraph g(13);
  g.Input("data", {-1, 4, 8, 8});  // symbolic batch: becomes 1
  g.model().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()
      ->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  g.Initializer("w", {8, 2, 3, 3}, std::vector<float>(8 * 2 * 9, 0.5f));
  g.Initializer("unused", {2}, {1.f, 2.f});
  auto* conv = g.Node("Conv", {"data", "w"}, {"y"});
  SetAttr(conv, "pads", std::vector<int64_t>{0, 1, 2, 3});
  SetAttr(conv, "strides", std::vector<int64_t>{2, 1});
  SetAttr(conv, "group", int64_t{2});
  g.Output("y");
  const ModelFolder model = Import(g);
  ASSERT_EQ(model.inputs.size(), 1u);
  EXPECT_EQ(model.inputs[0].name, "data");
  EXPECT_EQ(model.inputs[0].shape, (std::vector<int64_t>{1, 4, 8, 8}));
  ASSERT_EQ(model.predict_net.op_size(), 1);
  const ArgumentReader args(model.predict_net.op(0).arg());
  EXPECT_EQ(args.GetList<int64_t>("pads"), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(args.GetList<int64_t>("strides"), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(args.Get<int64_t>("group", 1), 2);
  ASSERT_EQ(model.init_net.op_size(), 1);  // "unused" is not filled
  EXPECT_EQ(model.init_net.op(0).type(), "GivenTensorFill");
  EXPECT_EQ(ArgumentReader(model.init_net.op(0).arg()).GetList<int64_t>("shape"),
            (std::vector<int64_t>{8, 2, 3, 3}));
  EXPECT_EQ(std::vector<std::string>(model.predict_net.external_input().begin(),
                                     model.predict_net.external_input().end()),
            (std::vector<std::string>{"data", "w"}));
  EXPECT_EQ(model.predict_net.external_output(0), "y");

  const std::string dir = ::testing::TempDir() + "/onnx_zoo_layout";
  ASSERT_TRUE(WriteModelFolder(dir, model).ok());
  EXPECT_EQ(LoadNetDef(dir + "/predict_net.pb").op(0).type(), "Conv");
  EXPECT_EQ(LoadNetDef(dir + "/init_net.pb").op_size(), 1);
  std::ifstream json(dir + "/value_info.json");
  std::stringstream text;
  text << json.rdbuf();
  EXPECT_EQ(text.str(), "{\"data\": [1, [1, 4, 8, 8]]}\n");
  std::filesystem::remove_all(dir);
}

TEST(OnnxImportNetTest, IdentityAsGraphOutputBecomesACopy) {
  OnnxTestGraph g(13);
  g.Input("x", {1, 4});
  g.Node("Relu", {"x"}, {"r"});
  g.Node("Identity", {"r"}, {"y"});
  g.Output("y");
  const ModelFolder model = Import(g);
  ASSERT_EQ(model.predict_net.op_size(), 2);
  EXPECT_EQ(model.predict_net.op(1).type(), "Copy");
  EXPECT_EQ(model.predict_net.op(1).input(0), "r");
}

TEST(OnnxImportNetTest, UnfoldableNodesAreRefusedNamingTheNode) {
  OnnxTestGraph pad_max(13);  // zero padding is not -inf padding
  pad_max.Input("x", {1, 1, 4, 4});
  pad_max.IntInitializer("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  pad_max.Node("Pad", {"x", "pads"}, {"p"});
  SetAttr(pad_max.Node("MaxPool", {"p"}, {"y"}), "kernel_shape", std::vector<int64_t>{2, 2});
  pad_max.Output("y");
  EXPECT_NE(ImportError(pad_max).find("node #1 (MaxPool 'MaxPool_1'): opset 13: reads 'p', the "
                                      "output of a Pad"),
            std::string::npos);

  OnnxTestGraph computed_b(13);
  computed_b.Input("x", {2, 2});
  computed_b.Node("MatMul", {"x", "x"}, {"y"});
  computed_b.Output("y");
  EXPECT_NE(ImportError(computed_b).find("B (MatMul imports as FC) (input 1 'x') must be a constant"),
            std::string::npos);

  OnnxTestGraph both_broadcast(13);
  both_broadcast.Input("x", {2, 1});
  both_broadcast.Initializer("row", {1, 3}, {1, 2, 3});
  both_broadcast.Node("Add", {"x", "row"}, {"y"});
  both_broadcast.Output("y");
  EXPECT_NE(ImportError(both_broadcast).find("broadcasting A [2,1] and B [1,3]"),
            std::string::npos);

  EXPECT_NE(ImportError(OnnxTestGraph(13)).find("one input, this one has 0"), std::string::npos);
}

// Dims whose element count overflows int64 ([4, 2^62] wrapped to 0 elements before, so an empty
// data field passed and MatMul's transpose of it wrote past its end): an error naming the file and
// the initializer.
TEST(OnnxImportNetTest, InitializersWhoseCountOverflowsAreRefused) {
  OnnxTestGraph g(13);
  g.Input("x", {1, 4});
  g.Initializer("w", {4, int64_t{1} << 62}, {});
  g.Node("MatMul", {"x", "w"}, {"y"});
  g.Output("y");
  const std::string error = ImportError(g);
  EXPECT_NE(error.find("model.onnx: initializer: tensor 'w': "), std::string::npos) << error;
  EXPECT_NE(error.find("overflow"), std::string::npos) << error;

  OnnxTestGraph short_data(13);  // 2x3 dims, 5 values
  short_data.Input("x", {1, 2});
  short_data.Initializer("w", {2, 3}, {1, 2, 3, 4, 5});
  short_data.Node("MatMul", {"x", "w"}, {"y"});
  short_data.Output("y");
  const std::string short_error = ImportError(short_data);
  EXPECT_NE(short_error.find("model.onnx: initializer: tensor 'w' has 20 raw bytes, its dims [2,3] need 6 "
                       "elements of 4 bytes"),
            std::string::npos)
      << short_error;
}

// Constants joined on an axis must agree on every other dim ([2,3] ++ [1,4] on axis 1 read past
// the first part's values before): an error naming the node.
TEST(OnnxImportNetTest, ConcatOfConstantsWithOtherDimsDifferingIsRefused) {
  OnnxTestGraph g(13);
  g.Input("x", {1, 7});
  g.Initializer("a", {2, 3}, TestValues(6, 1));
  g.Initializer("b", {1, 4}, TestValues(4, 2));
  SetAttr(g.Node("Concat", {"a", "b"}, {"c"}), "axis", int64_t{1});
  g.Node("Add", {"x", "c"}, {"y"});
  g.Output("y");
  const std::string error = ImportError(g);
  EXPECT_NE(error.find("model.onnx: node #0 (Concat"), std::string::npos) << error;
  EXPECT_NE(error.find("Concat of constants [2,3] and [1,4] on axis 1: dim 0 differs"),
            std::string::npos)
      << error;
}

// A zero stride, dilation, kernel or group stopped the process with SIGFPE inside ONNX's shape
// inference (found by the onnx fuzz harness); now it is an error naming the node.
TEST(OnnxImportNetTest, ZeroWindowAttributesAreRefusedBeforeShapeInference) {
  for (const char* attribute : {"strides", "dilations", "kernel_shape"}) {
    OnnxTestGraph g(13);
    g.Input("data", {1, 2, 6, 6});
    g.Initializer("w", {4, 2, 3, 3}, TestValues(72, 1));
    auto* conv = g.Node("Conv", {"data", "w"}, {"y"});
    conv->set_name("c");
    SetAttr(conv, attribute, std::vector<int64_t>{1, 0});
    g.Output("y");
    EXPECT_EQ(ImportError(g), std::string("model.onnx: node #0 (Conv 'c'): attribute '") +
                                  attribute + "' holds 0; it must be positive");
  }
  OnnxTestGraph pool(13);
  pool.Input("data", {1, 2, 6, 6});
  auto* max = pool.Node("MaxPool", {"data"}, {"y"});
  SetAttr(max, "kernel_shape", std::vector<int64_t>{2, 2});
  SetAttr(max, "pads", std::vector<int64_t>{0, -1, 0, 0});
  pool.Output("y");
  EXPECT_EQ(ImportError(pool),
            "model.onnx: node #0 (MaxPool 'MaxPool_0'): attribute 'pads' holds -1; it must be "
            "non-negative");
}

// A Concat fold is capped like a Gather fold: a chain of Concats of a constant with itself doubles
// it at every node, so a small file could otherwise fold gigabytes.
TEST(OnnxImportNetTest, AConcatFoldLargerThanTheCapIsRefused) {
  OnnxTestGraph g(13);
  g.Input("x", {1, 1});
  g.Initializer("c0", {1, int64_t{1} << 16}, TestValues(int64_t{1} << 16, 1));
  const int doublings = 11;  // 2^16 << 11 = 2^27 elements, over the cap of 2^26
  for (int k = 0; k < doublings; ++k) {
    const std::string in = "c" + std::to_string(k), out = "c" + std::to_string(k + 1);
    SetAttr(g.Node("Concat", {in, in}, {out}), "axis", int64_t{0});
  }
  g.Node("Add", {"x", "c" + std::to_string(doublings)}, {"y"});
  g.Output("y");
  const std::string error = ImportError(g);
  EXPECT_NE(error.find("node #10 (Concat"), std::string::npos) << error;
  EXPECT_NE(error.find("would fold 134217728 elements, more than braid folds (67108864)"),
            std::string::npos)
      << error;
}

// Folds of constants with no elements but huge leading dims return at once (they looped over
// the leading dims, 2^62 times, before).
TEST(OnnxImportNetTest, FoldsOfEmptyConstantsWithHugeDimsReturnAtOnce) {
  const int64_t huge = int64_t{1} << 62;
  OnnxTestGraph concat(13);
  concat.Input("x", {1, 7});
  concat.Initializer("a", {huge, 0}, {});
  concat.Initializer("b", {huge, 0}, {});
  SetAttr(concat.Node("Concat", {"a", "b"}, {"c"}), "axis", int64_t{1});
  concat.Node("Add", {"x", "c"}, {"y"});
  concat.Output("y");
  EXPECT_EQ(ImportError(concat).find("node #0"), std::string::npos);  // the Concat folded

  OnnxTestGraph gather(13);
  gather.Input("x", {1, 7});
  gather.Initializer("d", {huge, 1, 0}, {});
  gather.IntInitializer("i", {1}, {0});
  SetAttr(gather.Node("Gather", {"d", "i"}, {"g"}), "axis", int64_t{1});
  gather.Node("Add", {"x", "g"}, {"y"});
  gather.Output("y");
  EXPECT_EQ(ImportError(gather).find("node #0"), std::string::npos);  // the Gather folded
}

TEST(OnnxImportNetTest, FileErrorsNameTheFile) {
  ModelFolder model;
  Status status = ImportOnnxFile("/nonexistent/model.onnx", {}, &model);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("/nonexistent/model.onnx"), std::string::npos);
  status = ImportOnnxBytes("not a protobuf \xff\xff", "junk.onnx", {}, &model);
  EXPECT_EQ(status.message(), "junk.onnx: not an ONNX model (it does not parse)");
}

}  // namespace
}  // namespace braid::test
