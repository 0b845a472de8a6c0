// Initializers stored beside the model (PyTorch 2.x's model.onnx.data): read by ImportOnnxFile
// from the model's folder, and refused with the tensor and the file named when the location, the
// range or the file is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runtime/onnx/onnx_test_graph.h"

namespace braid::test {
namespace {

// x [1, 3] * w [1, 3], with w's 12 bytes at `offset` of `location`.
OnnxTestGraph ExternalWeightGraph(const std::string& location, const std::string& offset,
                                  const std::string& length) {
  OnnxTestGraph g(18);
  g.Input("x", {1, 3});
  g.Initializer("w", {1, 3}, {0.f, 0.f, 0.f});
  onnx::TensorProto* w = g.model().mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  const std::vector<std::pair<std::string, std::string>> entries = {
      {"location", location}, {"offset", offset}, {"length", length}};
  for (const auto& [key, value] : entries) {
    if (value.empty()) continue;
    onnx::StringStringEntryProto* entry = w->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  g.Node("Mul", {"x", "w"}, {"y"});
  g.Output("y");
  return g;
}

class OnnxExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/onnx_external_data";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    const float values[4] = {9.f, 2.f, 3.f, 4.f};  // w = {2, 3, 4} at offset 4
    std::ofstream(dir_ + "/model.onnx.data", std::ios::binary)
        .write(reinterpret_cast<const char*>(values), sizeof(values));
  }

  Status ImportFile(const OnnxTestGraph& g, ModelFolder* model) {
    const std::string path = dir_ + "/model.onnx";
    std::ofstream(path, std::ios::binary) << g.Bytes();
    return ImportOnnxFile(path, {}, model);
  }

  std::string dir_;
};

TEST_F(OnnxExternalDataTest, WeightsBesideTheModelAreRead) {
  ModelFolder model;
  ASSERT_TRUE(ImportFile(ExternalWeightGraph("model.onnx.data", "4", "12"), &model).ok());
  bool found = false;
  for (const OperatorDef& fill : model.init_net.op()) {
    if (fill.output(0) != "w") continue;
    for (const Argument& arg : fill.arg()) {
      if (arg.name() != "values") continue;
      found = true;
      EXPECT_EQ(std::vector<float>(arg.floats().begin(), arg.floats().end()),
                (std::vector<float>{2.f, 3.f, 4.f}));
    }
  }
  EXPECT_TRUE(found) << model.init_net.DebugString();
}

TEST_F(OnnxExternalDataTest, BadLocationsRangesAndFilesAreRefusedNamingTheTensor) {
  const std::string where = dir_ + "/model.onnx: initializer 'w': ";
  const std::vector<std::pair<OnnxTestGraph, std::string>> cases = {
      {ExternalWeightGraph("../model.onnx.data", "4", "12"),
       "location '../model.onnx.data' is not a relative path below the model's folder"},
      {ExternalWeightGraph("/etc/passwd", "", ""), "location '/etc/passwd' is not a relative path"},
      {ExternalWeightGraph("missing.data", "", ""), "cannot open '" + dir_ + "/missing.data'"},
      {ExternalWeightGraph("model.onnx.data", "8", "12"),
       "bytes [8, +12) lie outside '" + dir_ + "/model.onnx.data' of 16 bytes"},
      {ExternalWeightGraph("model.onnx.data", "-4", ""), "offset '-4' is not a non-negative"},
      {ExternalWeightGraph("model.onnx.data", "0", "16"),
       "tensor 'w' has 16 raw bytes, its dims [1,3] need 3 elements of 4 bytes"},
  };
  for (const auto& [graph, message] : cases) {
    ModelFolder model;
    const Status status = ImportFile(graph, &model);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find(message), std::string::npos) << status.message();
    EXPECT_NE(status.message().find(dir_ + "/model.onnx"), std::string::npos) << status.message();
  }
}

TEST_F(OnnxExternalDataTest, BytesWithoutAFolderRefuseExternalWeights) {
  ModelFolder model;
  const Status status = ImportOnnxBytes(ExternalWeightGraph("model.onnx.data", "4", "12").Bytes(),
                                        "<bytes>", {}, &model);
  EXPECT_NE(status.message().find("tensor 'w' is stored in an external file, which braid reads "
                                  "only when it imports the model from its file"),
            std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace braid::test
