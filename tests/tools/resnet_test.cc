// Tests of the model builder and the ResNet forward passes (runtime/models).
#include "runtime/models/resnet.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "braid/status.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/shape_inference.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"
#include "runtime/io/proto_io.h"
#include "runtime/models/model_builder.h"

namespace braid {
namespace {

struct Forward {
  ModelParams params;
  NetDef net;
  std::string logits;
};

Forward BuildForward(const std::string& model, int64_t channels, int64_t classes,
                     ModelBuilder::Options options = {}) {
  Forward f;
  f.net.set_name(model);
  ModelBuilder builder(&f.params, &f.net, options);
  f.logits = AddResNet(&builder, ResNetSpecFromName(model, channels, classes), "data");
  return f;
}

// Op types the forward passes and their init nets use; shape-inference and build tests need them.
std::string MissingSchemas() {
  std::string missing;
  for (const char* type : {"Conv", "SpatialBN", "Relu", "MaxPool", "AveragePool", "FC", "Sum",
                           "MSRAFill", "XavierFill", "ConstantFill"}) {
    if (FindSchema(type) == nullptr) missing += std::string(missing.empty() ? "" : ", ") + type;
  }
  return missing;
}

TEST(ResNetTest, TrainableParameterCountsMatchThePapers) {
  // CIFAR-style counts include the 1x1 projection shortcuts (0.27M, 0.46M, 0.85M in He et al.
  // with identity shortcuts); ImageNet-style counts equal torchvision's.
  const std::map<std::string, std::tuple<int64_t, int64_t, int64_t>> expected = {
      {"resnet20", {3, 10, 272474}},     {"resnet32", {3, 10, 466906}},
      {"resnet56", {3, 10, 855770}},     {"resnet18", {3, 1000, 11689512}},
      {"resnet34", {3, 1000, 21797672}}, {"resnet50", {3, 1000, 25557032}}};
  for (const auto& [model, spec] : expected) {
    const auto [channels, classes, count] = spec;
    EXPECT_EQ(BuildForward(model, channels, classes).params.TrainableCount(), count) << model;
  }
  // One input channel (Fashion-MNIST) removes 2 * 16 * 3 * 3 stem weights.
  EXPECT_EQ(BuildForward("resnet20", 1, 10).params.TrainableCount(), 272474 - 288);
}

TEST(ResNetTest, OpCountsFollowTheBlockStructure) {
  struct Counts {
    int conv, bn, relu, sum, max_pool;
  };
  const std::map<std::string, Counts> expected = {
      {"resnet20", {21, 21, 19, 9, 0}},  {"resnet32", {33, 33, 31, 15, 0}},
      {"resnet56", {57, 57, 55, 27, 0}}, {"resnet18", {20, 20, 17, 8, 1}},
      {"resnet34", {36, 36, 33, 16, 1}}, {"resnet50", {53, 53, 49, 16, 1}}};
  for (const auto& [model, c] : expected) {
    const Forward f = BuildForward(model, 3, 10);
    EXPECT_EQ(CountOps(f.net, "Conv"), c.conv) << model;
    EXPECT_EQ(CountOps(f.net, "SpatialBN"), c.bn) << model;
    EXPECT_EQ(CountOps(f.net, "Relu"), c.relu) << model;
    EXPECT_EQ(CountOps(f.net, "Sum"), c.sum) << model;
    EXPECT_EQ(CountOps(f.net, "MaxPool"), c.max_pool) << model;
    EXPECT_EQ(CountOps(f.net, "AveragePool"), 1) << model;
    EXPECT_EQ(CountOps(f.net, "FC"), 1) << model;
    EXPECT_EQ(f.logits, "pred") << model;
    // 4 parameters per batch norm, 1 per conv, 2 for the FC layer, each filled once.
    EXPECT_EQ(f.params.init_net.op_size(), 4 * c.bn + c.conv + 2) << model;
  }
}

TEST(ResNetTest, TestPassSharesParametersAndPrefixesActivations) {
  Forward f = BuildForward("resnet20", 1, 10);
  const size_t params = f.params.params.size();
  NetDef test;
  ModelBuilder builder(&f.params, &test, {.is_test = true, .blob_prefix = "test/"});
  EXPECT_EQ(AddResNet(&builder, ResNetSpecFromName("resnet20", 1, 10), "test/data"), "test/pred");
  EXPECT_EQ(f.params.params.size(), params) << "the test pass created parameters";
  for (const OperatorDef& op : test.op()) {
    for (const std::string& out : op.output()) {
      EXPECT_EQ(out.rfind("test/", 0), 0u) << op.type() << " writes " << out;
    }
    for (const std::string& in : op.input()) {
      EXPECT_TRUE(in.rfind("test/", 0) == 0 || f.params.Find(in) != nullptr) << in;
    }
    if (op.type() == "SpatialBN") {
      EXPECT_EQ(op.output_size(), 1);
      EXPECT_EQ(op.arg(0).name(), "is_test");
      EXPECT_EQ(op.arg(0).i(), 1);
    }
  }
  // The train pass writes the running statistics in place.
  const OperatorDef& bn = f.net.op(1);
  ASSERT_EQ(bn.type(), "SpatialBN");
  ASSERT_EQ(bn.output_size(), 5);
  EXPECT_EQ(bn.output(1), bn.input(3));
  EXPECT_EQ(bn.output(2), bn.input(4));
}

TEST(ResNetTest, ParameterKindsDecideWeightDecay) {
  const Forward f = BuildForward("resnet20", 1, 10);
  EXPECT_TRUE(f.params.Find("conv1_w")->weight_decay());
  EXPECT_TRUE(f.params.Find("pred_w")->weight_decay());
  EXPECT_FALSE(f.params.Find("pred_b")->weight_decay());
  EXPECT_TRUE(f.params.Find("conv1_bn_s")->trainable());
  EXPECT_FALSE(f.params.Find("conv1_bn_s")->weight_decay());
  EXPECT_FALSE(f.params.Find("conv1_bn_rm")->trainable());
  EXPECT_FALSE(f.params.Find("conv1_bn_riv")->trainable());
}

TEST(ResNetTest, ReusingAParameterWithAnotherShapeIsAnError) {
  ModelParams params;
  NetDef net;
  ModelBuilder builder(&params, &net, {});
  builder.Conv("x", "c", 3, 8, 3, 1, 1);
  const Status s = StatusFromCall([&] { builder.Conv("x", "c", 3, 16, 3, 1, 1); });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'c_w' exists with shape [8,3,3,3]"), std::string::npos)
      << s.ToString();
}

TEST(ResNetTest, UnknownModelNamesListTheKnownOnes) {
  for (const char* name : {"resnet21", "resnet", "vgg16", "resnet50x"}) {
    const Status s = StatusFromCall([&] { ResNetSpecFromName(name, 3, 10); });
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << name;
    EXPECT_NE(s.message().find("resnet56"), std::string::npos) << s.ToString();
  }
  EXPECT_EQ(ResNetSpecFromName("resnet110", 3, 10).depth, 110);
  EXPECT_EQ(ResNetSpecFromName("resnet101", 3, 10).style, ResNetStyle::kImageNet);
}

TEST(ResNetTest, NetsDumpToTextThatParsesBack) {
  const Forward f = BuildForward("resnet50", 3, 1000);
  for (const NetDef* net : {&f.net, &f.params.init_net}) {
    const std::string text = NetToText(*net);
    EXPECT_NE(text.find(net == &f.net ? "type: \"Conv\"" : "type: \"MSRAFill\""),
              std::string::npos);
    NetDef parsed;
    ParseTextProto(text, "<dump>", &parsed);
    EXPECT_EQ(parsed.SerializeAsString(), net->SerializeAsString());
  }
}

TEST(ResNetTest, ShapeInferenceGivesLogitsForAnyInputSize) {
  if (const std::string missing = MissingSchemas(); !missing.empty()) {
    GTEST_SKIP() << "ops not registered yet: " << missing;
  }
  struct Case {
    std::string model;
    std::vector<int64_t> data;
    int64_t classes;
  };
  for (const Case& c :
       {Case{"resnet20", {8, 1, 28, 28}, 10}, Case{"resnet56", {2, 3, 32, 32}, 10},
        Case{"resnet18", {2, 1, 28, 28}, 10}, Case{"resnet50", {2, 3, 224, 224}, 1000},
        Case{"resnet34", {1, 3, 64, 48}, 7}}) {
    const Forward f = BuildForward(c.model, c.data[1], c.classes);
    std::map<std::string, ShapeInfo> shapes = InferBlobShapes(f.params.init_net, {});
    shapes["data"] = ShapeInfo{DType::kFloat32, c.data, true};
    shapes = InferBlobShapes(f.net, shapes);
    EXPECT_TRUE(shapes.at(f.logits).known) << c.model;
    EXPECT_EQ(shapes.at(f.logits).dims, (std::vector<int64_t>{c.data[0], c.classes})) << c.model;
  }
}

TEST(ResNetTest, ForwardPassBuildsAndRunsInAWorkspace) {
  if (const std::string missing = MissingSchemas(); !missing.empty()) {
    GTEST_SKIP() << "ops not registered yet: " << missing;
  }
  for (bool is_test : {false, true}) {
    Forward f = BuildForward("resnet20", 1, 10, {.is_test = is_test});
    Workspace ws;
    ASSERT_TRUE(ws.RunNetOnce(f.params.init_net).ok());
    Tensor* data = ws.CreateBlob("data");
    data->Resize(DType::kFloat32, {4, 1, 28, 28});
    float* x = data->mutable_data<float>();
    for (int64_t i = 0; i < data->numel(); ++i) x[i] = static_cast<float>(i % 17) / 17.f - 0.5f;
    Net* net = ws.CreateNet(f.net);
    const Status s = net->Run();
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(ws.GetBlob("pred")->shape(), (std::vector<int64_t>{4, 10}));
  }
}

}  // namespace
}  // namespace braid
