// braid_run --model-dir, --input and --save-outputs, and braid_plan --model-dir, on zoo folders
// that braid_import writes from small ONNX models built here. Expected values come from naive
// loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/io/model_folder.h"
#include "runtime/io/npy_file.h"
#include "runtime/onnx/onnx_test_graph.h"
#include "testing/run_command.h"
#include "testing/test_paths.h"

namespace braid::test {
namespace {

using braid::testing::BraidBinary;
using braid::testing::RunCommand;
using Result = braid::testing::CommandResult;

// A path in the temporary folder, prefixed with the running test's name: ctest runs the tests of
// this file as concurrent processes.
std::string Temp(const std::string& name) {
  return ::testing::TempDir() + "/" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
}

// image [N, 8, 2, 2] -> global average pool -> flatten -> softmax "fc/prob:0" [N, 8].
// Weightless, so that naive loops give its expected outputs in a few lines.
std::string PoolSoftmaxModel() {
  OnnxTestGraph g(13);
  g.Input("image", {1, 8, 2, 2});
  g.Node("GlobalAveragePool", {"image"}, {"g"});
  g.Node("Flatten", {"g"}, {"f"});
  g.Node("Softmax", {"f"}, {"fc/prob:0"});
  g.Output("fc/prob:0");
  const std::string path = Temp("pool_softmax.onnx");
  std::ofstream(path, std::ios::binary) << g.Bytes();
  return path;
}

// A zoo folder written by braid_import from PoolSoftmaxModel.
std::string PoolSoftmaxFolder() {
  const std::string dir = Temp("pool_softmax_zoo");
  std::filesystem::remove_all(dir);
  const Result r =
      RunCommand(BraidBinary(BRAID_IMPORT_BINARY) + " " + PoolSoftmaxModel() + " --out " + dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return dir;
}

// The model's output computed with naive loops.
std::vector<float> ExpectedProb(const std::vector<float>& image, int images) {
  std::vector<float> prob(images * 8);
  for (int n = 0; n < images; ++n) {
    double mean[8], max = -1e300, sum = 0;
    for (int c = 0; c < 8; ++c) {
      mean[c] = 0;
      for (int i = 0; i < 4; ++i) mean[c] += image[(n * 8 + c) * 4 + i] / 4.0;
      max = std::max(max, mean[c]);
    }
    for (int c = 0; c < 8; ++c) sum += std::exp(mean[c] - max);
    for (int c = 0; c < 8; ++c) prob[n * 8 + c] = static_cast<float>(std::exp(mean[c] - max) / sum);
  }
  return prob;
}

std::string WriteImageNpy(const std::string& name, const std::vector<float>& values, int images,
                          DType dtype = DType::kFloat32) {
  Tensor t;
  t.Resize(DType::kFloat32, {images, 8, 2, 2});
  std::copy(values.begin(), values.end(), t.mutable_data<float>());
  if (dtype == DType::kFloat64) {
    Tensor wide;
    wide.Resize(DType::kFloat64, t.shape());
    for (int64_t i = 0; i < t.numel(); ++i) wide.mutable_data<double>()[i] = values[i];
    t = wide;
  }
  const std::string path = Temp(name);
  EXPECT_TRUE(WriteNpyFile(path, t).ok());
  return path;
}

// "top-5 fc/prob:0 image N: c (p), ..." for `prob`'s image n, ordered by score as braid_run does.
std::string TopFiveLine(const std::vector<float>& prob, int n) {
  std::vector<int> order(8);
  for (int c = 0; c < 8; ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return prob[n * 8 + a] > prob[n * 8 + b]; });
  std::string line = "top-5 fc/prob:0 image " + std::to_string(n) + ":";
  for (int i = 0; i < 5; ++i) {
    char entry[64];
    std::snprintf(entry, sizeof(entry), "%s %d (%.6g)", i ? "," : "", order[i],
                  prob[n * 8 + order[i]]);
    line += entry;
  }
  return line + "\n";
}

std::string ChecksumOf(const std::string& output, const std::string& blob) {
  const size_t at = output.find("output " + blob + " shape ");
  if (at == std::string::npos) return "";
  return output.substr(at, output.find('\n', at) - at);
}

TEST(ModelDirTest, BraidRunFeedsANpyFileAndPrintsTopClassesPerImage) {
  const std::string dir = PoolSoftmaxFolder();
  const std::vector<float> image = TestValues(2 * 8 * 4, 7);
  const std::string npy = WriteImageNpy("two_images.npy", image, 2);
  const std::string saved = Temp("saved_outputs");
  std::filesystem::remove_all(saved);
  const Result r = RunCommand(BraidBinary(BRAID_RUN_BINARY) + " --model-dir " + dir +
                              " --input image=" + npy + " --save-outputs " + saved);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("input image shape float32[2,8,2,2]: from " + npy + "\n"),
            std::string::npos)
      << r.output;
  const std::vector<float> expected = ExpectedProb(image, 2);
  EXPECT_NE(r.output.find(TopFiveLine(expected, 0) + TopFiveLine(expected, 1)), std::string::npos)
      << r.output;
  // The name is sanitised into one file inside the folder.
  EXPECT_NE(r.output.find("saved fc/prob:0 to " + saved + "/fc_prob_0.npy"), std::string::npos)
      << r.output;
  Tensor prob;
  ASSERT_TRUE(ReadNpyFile(saved + "/fc_prob_0.npy", &prob).ok());
  ASSERT_EQ(prob.ShapeString(), "float32[2,8]");
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(prob.data<float>()[i], expected[i], 1e-6) << i;
}

// No --input, --input NAME=random, and the .onnx file itself feed the same seeded values.
TEST(ModelDirTest, RandomInputIsSeededAndShapedByValueInfo) {
  const std::string dir = PoolSoftmaxFolder();
  const std::string run = BraidBinary(BRAID_RUN_BINARY) + " ";
  const Result plain = RunCommand(run + "--model-dir " + dir);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_NE(plain.output.find("input image shape float32[1,8,2,2]: uniform [-1, 1), seed 0"),
            std::string::npos)
      << plain.output;
  const std::string checksum = ChecksumOf(plain.output, "fc/prob:0");
  ASSERT_NE(checksum, "") << plain.output;
  EXPECT_NE(plain.output.find("top-5 fc/prob:0 image 0:"), std::string::npos) << plain.output;
  for (const std::string& variant :
       {"--model-dir " + dir + " --input image=random --executor dag --threads 2 --memory-plan on",
        PoolSoftmaxModel(), PoolSoftmaxModel() + " --input image=random"}) {
    const Result r = RunCommand(run + variant);
    ASSERT_EQ(r.exit_code, 0) << variant << "\n" << r.output;
    EXPECT_EQ(ChecksumOf(r.output, "fc/prob:0"), checksum) << variant << "\n" << r.output;
  }
}

TEST(ModelDirTest, BraidRunOnAnOnnxFileImportsForTheNpyShape) {
  const std::vector<float> image = TestValues(3 * 8 * 4, 11);
  const std::string npy = WriteImageNpy("three_images.npy", image, 3);
  const std::string saved = Temp("onnx_outputs");
  const Result r = RunCommand(BraidBinary(BRAID_RUN_BINARY) + " " + PoolSoftmaxModel() +
                              " --input image=" + npy + " --save-outputs " + saved);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  Tensor prob;
  ASSERT_TRUE(ReadNpyFile(saved + "/fc_prob_0.npy", &prob).ok());
  ASSERT_EQ(prob.ShapeString(), "float32[3,8]");
  const std::vector<float> expected = ExpectedProb(image, 3);
  for (int i = 0; i < 24; ++i) EXPECT_NEAR(prob.data<float>()[i], expected[i], 1e-6) << i;
}

// A plain NetDef takes --input NAME=FILE.npy too, in the file's shape.
TEST(ModelDirTest, BraidRunFeedsANpyFileToAPlainNet) {
  const std::string net = Temp("relu.pbtxt");
  std::ofstream(net) << "name: \"relu\"\nop { type: \"Relu\" input: \"x\" output: \"y\" }\n"
                        "external_input: \"x\"\nexternal_output: \"y\"\n";
  Tensor x;
  x.Resize(DType::kFloat32, {2, 3});
  const float values[6] = {-1.5f, 2.25f, 0, -0.0625f, 7, -3};
  std::copy(values, values + 6, x.mutable_data<float>());
  const std::string npy = Temp("x.npy");
  ASSERT_TRUE(WriteNpyFile(npy, x).ok());
  const std::string saved = Temp("relu_out");
  const Result r = RunCommand(BraidBinary(BRAID_RUN_BINARY) + " " + net + " --input x=" + npy +
                              " --save-outputs " + saved);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("input x shape float32[2,3]: from " + npy), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("top-5"), std::string::npos) << r.output;  // 3 classes: no top-5
  Tensor y;
  ASSERT_TRUE(ReadNpyFile(saved + "/y.npy", &y).ok());
  ASSERT_EQ(y.ShapeString(), "float32[2,3]");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.data<float>()[i], std::max(values[i], 0.f)) << i;
}

// A folder whose value_info.json names two inputs (as detection models take data and im_info):
// each is fed from its --input, or random values when none names it; braid_plan creates both.
TEST(ModelDirTest, ModelsTakeSeveralInputsInValueInfosOrder) {
  ModelFolder model;
  model.init_net.set_name("scale_init");
  model.predict_net.set_name("scale");
  OperatorDef* mul = model.predict_net.add_op();
  mul->set_type("Mul");
  mul->add_input("x");
  mul->add_input("s");
  mul->add_output("y");
  model.predict_net.add_external_input("x");
  model.predict_net.add_external_input("s");
  model.predict_net.add_external_output("y");
  model.inputs = {{"x", DType::kFloat32, {2, 3}}, {"s", DType::kFloat32, {2, 3}}};
  const std::string dir = Temp("two_inputs_zoo");
  ASSERT_TRUE(WriteModelFolder(dir, model).ok());

  Tensor x, s;
  x.Resize(DType::kFloat32, {2, 3});
  s.Resize(DType::kFloat32, {2, 3});
  for (int i = 0; i < 6; ++i) {
    x.mutable_data<float>()[i] = 0.5f * i - 1;
    s.mutable_data<float>()[i] = 3 - i;
  }
  ASSERT_TRUE(WriteNpyFile(Temp("x.npy"), x).ok());
  ASSERT_TRUE(WriteNpyFile(Temp("s.npy"), s).ok());
  const std::string run = BraidBinary(BRAID_RUN_BINARY) + " --model-dir " + dir;
  Result r = RunCommand(run + " --input s=" + Temp("s.npy") + " --input x=" + Temp("x.npy") +
                        " --save-outputs " + Temp("two_inputs_out"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("input x shape float32[2,3]: from " + Temp("x.npy") + "\ninput s shape "
                          "float32[2,3]: from " + Temp("s.npy")),
            std::string::npos)
      << r.output;
  Tensor y;
  ASSERT_TRUE(ReadNpyFile(Temp("two_inputs_out") + "/y.npy", &y).ok());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.data<float>()[i], (0.5f * i - 1) * (3 - i)) << i;

  r = RunCommand(run + " --input x=" + Temp("x.npy"));  // s: random
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("input s shape float32[2,3]: uniform [-1, 1), seed 0"),
            std::string::npos)
      << r.output;
  r = RunCommand(run + " --input x=random --input x=random");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--input x is given twice"), std::string::npos) << r.output;
  r = RunCommand(run + " --input im_info=random");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--input im_info: the model's inputs are 'x', 's'"), std::string::npos)
      << r.output;
  r = RunCommand(BraidBinary(BRAID_PLAN_BINARY) + " --model-dir " + dir + " --input s=4,3");
  ASSERT_EQ(r.exit_code, 1) << r.output;  // Mul refuses x [2,3] times s [4,3]
  r = RunCommand(BraidBinary(BRAID_PLAN_BINARY) + " --model-dir " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("model input 'x' float32[2,3]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("model input 's' float32[2,3]"), std::string::npos) << r.output;
}

TEST(ModelDirTest, BraidPlanPlansTheFolderWithValueInfoOrInputShape) {
  const std::string dir = PoolSoftmaxFolder();
  const std::string plan = BraidBinary(BRAID_PLAN_BINARY) + " --model-dir " + dir;
  Result r = RunCommand(plan);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("model input 'image' float32[1,8,2,2]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("verification: OK"), std::string::npos) << r.output;
  // g and f, 8 floats each rounded up to the planner's 64-byte alignment; fc/prob:0 is an output
  // and keeps its own storage.
  EXPECT_NE(r.output.find("naive                    128 B"), std::string::npos) << r.output;
  r = RunCommand(plan + " --input image=4,8,2,2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("model input 'image' float32[4,8,2,2]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("naive                    256 B"), std::string::npos) << r.output;
  r = RunCommand(plan + " --init x.pbtxt");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = RunCommand(BraidBinary(BRAID_PLAN_BINARY) + " --model-dir " + Temp("no_such_zoo"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no_such_zoo' does not exist"), std::string::npos) << r.output;
}

TEST(ModelDirTest, BadInputsAndFoldersAreRefusedWithExitCodes) {
  const std::string dir = PoolSoftmaxFolder();
  const std::string run = BraidBinary(BRAID_RUN_BINARY) + " ";
  // A float64 file for a float32 input: exit 1, naming the file and the fix.
  const std::string wide = WriteImageNpy("wide.npy", TestValues(32, 3), 1, DType::kFloat64);
  Result r = RunCommand(run + "--model-dir " + dir + " --input image=" + wide);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(wide + ": the file holds float64[1,8,2,2], but input 'image' is float32"),
            std::string::npos)
      << r.output;
  r = RunCommand(run + "--model-dir " + dir + " --input data=random");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--input data: the model's inputs are 'image'"), std::string::npos)
      << r.output;
  r = RunCommand(run + "--model-dir " + dir + " --input image=" + Temp("missing.npy"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("cannot open '" + Temp("missing.npy") + "'"), std::string::npos)
      << r.output;
  r = RunCommand(run + "--model-dir " + Temp("no_such_zoo"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  std::filesystem::remove(dir + "/value_info.json");
  r = RunCommand(run + "--model-dir " + dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(dir + "/value_info.json"), std::string::npos) << r.output;
  // Bad flags: exit 2.
  for (const std::string& flags :
       {"--model-dir " + dir + " net.pbtxt", "--model-dir " + dir + " --init init.pbtxt",
        std::string("net.pbtxt --input x=random"), "--model-dir " + dir + " --input image"}) {
    r = RunCommand(run + flags);
    EXPECT_EQ(r.exit_code, 2) << flags << "\n" << r.output;
  }
}

}  // namespace
}  // namespace braid::test
