// braid_import and braid_run on .onnx files written here: the zoo folder, the run's checksum lines,
// and exit codes 1 (an import error, on one line) and 2 (bad flags).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/onnx/onnx_test_graph.h"
#include "testing/run_command.h"
#include "testing/test_paths.h"

namespace braid::test {
namespace {

using braid::testing::BraidBinary;
using braid::testing::RunCommand;
using Result = braid::testing::CommandResult;

std::string WriteModel(const OnnxTestGraph& graph, const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << graph.Bytes();
  return path;
}

// Conv (weights in the init net's GivenTensorFill ops) -> Relu -> pools -> Softmax.
OnnxTestGraph PoolingModel() {
  OnnxTestGraph g(13);
  g.Input("image", {1, 3, 6, 6});
  g.Initializer("w", {3, 3, 1, 1}, TestValues(9, 1));
  g.Initializer("b", {3}, TestValues(3, 2));
  g.Node("Conv", {"image", "w", "b"}, {"c"});
  g.Node("Relu", {"c"}, {"r"});
  auto* pool = g.Node("MaxPool", {"r"}, {"p"});
  SetAttr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  SetAttr(pool, "strides", std::vector<int64_t>{2, 2});
  g.Node("GlobalAveragePool", {"p"}, {"g"});
  g.Node("Flatten", {"g"}, {"f"});
  g.Node("Softmax", {"f"}, {"prob"});
  g.Output("prob");
  return g;
}

TEST(OnnxToolsTest, BraidImportWritesAZooFolder) {
  OnnxTestGraph g(13);
  g.Input("data", {1, 2, 4, 4});
  g.Initializer("w", {3, 2, 1, 1}, TestValues(6, 1));
  g.Node("Conv", {"data", "w"}, {"y"});
  g.Output("y");
  const std::string model = WriteModel(g, "conv.onnx");
  const std::string dir = ::testing::TempDir() + "/conv_zoo";
  const Result r = RunCommand(BraidBinary(BRAID_IMPORT_BINARY) + " " + model + " --out " + dir +
                       " --input-shape 2,2,4,4");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 ops, 1 weights (6 values), input 'data' [2,2,4,4]"),
            std::string::npos)
      << r.output;
  for (const char* file : {"init_net.pb", "predict_net.pb", "value_info.json"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + file)) << file;
  }
  std::filesystem::remove_all(dir);
}

TEST(OnnxToolsTest, BraidImportExitCodes) {
  OnnxTestGraph g(13);
  g.Input("x", {1, 4});
  g.Node("Einsum", {"x"}, {"y"});
  g.Output("y");
  const std::string model = WriteModel(g, "einsum.onnx");
  Result r = RunCommand(BraidBinary(BRAID_IMPORT_BINARY) + " " + model + " --out " +
                 ::testing::TempDir() + "/never_written");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output, "InvalidArgument: " + model + ": unsupported ONNX ops: Einsum x1\n");
  r = RunCommand(BraidBinary(BRAID_IMPORT_BINARY) + " " + model);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--out DIR is required"), std::string::npos) << r.output;
  r = RunCommand(BraidBinary(BRAID_IMPORT_BINARY) + " " + model + " --out x --input-shape 1,a");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// braid_run MODEL.onnx: the same checksum on the simple executor and on dag with the memory plan.
TEST(OnnxToolsTest, BraidRunRunsAnOnnxModelOnEveryExecutor) {
  const std::string model = WriteModel(PoolingModel(), "pooling.onnx");
  const Result simple = RunCommand(BraidBinary(BRAID_RUN_BINARY) + " " + model);
  ASSERT_EQ(simple.exit_code, 0) << simple.output;
  EXPECT_NE(simple.output.find("input image shape float32[1,3,6,6]: uniform [-1, 1), seed 0"), std::string::npos)
      << simple.output;
  const size_t line = simple.output.find("output prob shape float32[1,3] ");
  ASSERT_NE(line, std::string::npos) << simple.output;
  const std::string checksum = simple.output.substr(line, simple.output.find('\n', line) - line);
  const Result dag = RunCommand(BraidBinary(BRAID_RUN_BINARY) + " " + model +
                         " --executor dag --threads 2 --memory-plan on");
  ASSERT_EQ(dag.exit_code, 0) << dag.output;
  EXPECT_NE(dag.output.find("memory plan:"), std::string::npos) << dag.output;
  EXPECT_NE(dag.output.find(checksum), std::string::npos) << dag.output;
  const Result init = RunCommand(BraidBinary(BRAID_RUN_BINARY) + " " + model + " --init x.pbtxt");
  EXPECT_EQ(init.exit_code, 2) << init.output;
}

}  // namespace
}  // namespace braid::test
