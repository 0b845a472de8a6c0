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
    // One folder per test: ctest runs the tests of this fixture in parallel.
    dir_ = ::testing::TempDir() + "/onnx_external_data_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
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
       "length 16 differs from the 12 bytes its dims and data type need"},
  };
  for (const auto& [graph, message] : cases) {
    ModelFolder model;
    const Status status = ImportFile(graph, &model);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find(message), std::string::npos) << status.message();
    EXPECT_NE(status.message().find(dir_ + "/model.onnx"), std::string::npos) << status.message();
  }
}

// The values the init net fills `blob` with.
std::vector<float> FilledValues(const ModelFolder& model, const std::string& blob) {
  for (const OperatorDef& fill : model.init_net.op()) {
    if (fill.output(0) != blob) continue;
    for (const Argument& arg : fill.arg()) {
      if (arg.name() == "values") return {arg.floats().begin(), arg.floats().end()};
    }
  }
  ADD_FAILURE() << "no fill of '" << blob << "' in " << model.init_net.DebugString();
  return {};
}

TEST_F(OnnxExternalDataTest, WithoutALengthTheDataRunsToTheEndOfTheFile) {
  // ONNX's loader reads from offset to the end of the file: 12 bytes from offset 4 fill w [1,3].
  ModelFolder model;
  const Status status = ImportFile(ExternalWeightGraph("model.onnx.data", "4", ""), &model);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(FilledValues(model, "w"), (std::vector<float>{2.f, 3.f, 4.f}));
}

TEST_F(OnnxExternalDataTest, RangesAndTypesMustMatchTheDimsBeforeAnythingIsRead) {
  OnnxTestGraph bfloat = ExternalWeightGraph("model.onnx.data", "0", "6");
  bfloat.model().mutable_graph()->mutable_initializer(0)->set_data_type(
      onnx::TensorProto::BFLOAT16);
  const std::vector<std::pair<OnnxTestGraph, std::string>> cases = {
      // A length beyond the dims' need is refused, not allocated; so is a huge one.
      {ExternalWeightGraph("model.onnx.data", "0", "16"),
       "initializer 'w': length 16 differs from the 12 bytes its dims and data type need"},
      {ExternalWeightGraph("model.onnx.data", "0", "999999999999"),
       "length 999999999999 differs from the 12 bytes"},
      // Without a length, 16 bytes from offset 0 are more than [1,3] floats.
      {ExternalWeightGraph("model.onnx.data", "0", ""),
       "without a length the data runs from offset 0 to the end of '" + dir_ +
           "/model.onnx.data', 16 bytes, but its dims and data type need 12"},
      {bfloat, "initializer 'w': ONNX data type 16 is not one braid reads"},
  };
  for (const auto& [graph, message] : cases) {
    ModelFolder model;
    const Status status = ImportFile(graph, &model);
    EXPECT_FALSE(status.ok());
    EXPECT_NE(status.message().find(message), std::string::npos) << status.message();
  }
}

TEST_F(OnnxExternalDataTest, SymbolicLinksAndOtherFilesOutsideTheFolderAreRefused) {
  // A file outside the model's folder with exactly w's 12 bytes: only the links reach it.
  const std::string outside = dir_ + "_outside";
  std::filesystem::remove_all(outside);
  std::filesystem::create_directories(outside);
  const float secret[3] = {7.f, 7.f, 7.f};
  std::ofstream(outside + "/secret.data", std::ios::binary)
      .write(reinterpret_cast<const char*>(secret), sizeof(secret));
  std::filesystem::create_symlink(outside + "/secret.data", dir_ + "/weights.bin");
  std::filesystem::create_directory_symlink(outside, dir_ + "/sub");
  std::filesystem::create_directories(dir_ + "/folder");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"weights.bin", "location 'weights.bin' passes through the symbolic link '" + dir_ +
                          "/weights.bin', which braid does not follow"},
      {"sub/secret.data", "location 'sub/secret.data' passes through the symbolic link '" + dir_ +
                              "/sub'"},
      {"folder", "location 'folder' names '" + dir_ + "/folder', which is not a regular file"},
  };
  for (const auto& [location, message] : cases) {
    ModelFolder model;
    const Status status = ImportFile(ExternalWeightGraph(location, "0", "12"), &model);
    EXPECT_FALSE(status.ok()) << location;
    EXPECT_NE(status.message().find("initializer 'w': " + message), std::string::npos)
        << status.message();
  }
  std::filesystem::remove_all(outside);
}

TEST_F(OnnxExternalDataTest, ConstantNodeValuesInExternalDataAreRead) {
  OnnxTestGraph g(18);
  g.Input("x", {1, 3});
  onnx::NodeProto* constant = g.Node("Constant", {}, {"c"});
  onnx::AttributeProto* value = constant->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* t = value->mutable_t();
  t->set_name("c");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(1);
  t->add_dims(3);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, text] : std::vector<std::pair<std::string, std::string>>{
           {"location", "model.onnx.data"}, {"offset", "4"}, {"length", "12"}}) {
    onnx::StringStringEntryProto* entry = t->add_external_data();
    entry->set_key(key);
    entry->set_value(text);
  }
  g.Node("Mul", {"x", "c"}, {"y"});
  g.Output("y");
  ModelFolder model;
  const Status status = ImportFile(g, &model);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(FilledValues(model, "c"), (std::vector<float>{2.f, 3.f, 4.f}));
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
