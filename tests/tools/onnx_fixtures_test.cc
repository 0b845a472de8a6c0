// PyTorch's outputs, independently computed: each model in tests/data/onnx (written by
// tools/onnx/make_fixtures.py with PyTorch 1.13's exporter at opset 13, and the dynamo_* ones by
// tools/onnx/make_dynamo_fixtures.py with PyTorch 2.x's default exporter at opsets 18 and 20) is
// imported by braid_import, run by braid_run --model-dir on the committed input.npy, and its saved
// output compared with PyTorch's output.npy. The same model run straight from its .onnx file on
// the dag executor with the memory plan must match too.
//
// Tolerance: max |braid - PyTorch| <= 1e-4 * max |PyTorch| (float32 kernels summing in another
// order differ by a few ulps per op; these nets have under 20 ops).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "testing/npy_compare.h"
#include "testing/run_command.h"
#include "testing/test_paths.h"

namespace braid {
namespace {

constexpr double kRelativeTolerance = 1e-4;

using braid::testing::BraidBinary;
using braid::testing::ExpectNpyClose;
using braid::testing::RunCommand;
using braid::testing::TestData;
using Result = braid::testing::CommandResult;

class OnnxFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxFixtureTest, MatchesPyTorchFromTheFolderAndTheOnnxFile) {
  const std::string fixture = TestData(BRAID_ONNX_FIXTURES, "tests/data/onnx") + "/" + GetParam();
  const std::string work = ::testing::TempDir() + "/fixture_" + GetParam();
  std::filesystem::remove_all(work);
  Result r = RunCommand(BraidBinary(BRAID_IMPORT_BINARY) + " " + fixture + "/model.onnx --out " +
                        work + "/zoo");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = RunCommand(BraidBinary(BRAID_RUN_BINARY) + " --model-dir " + work + "/zoo --input data=" +
                 fixture + "/input.npy --save-outputs " + work + "/folder_out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("top-5 prob image 0:"), std::string::npos) << r.output;
  ExpectNpyClose(work + "/folder_out/prob.npy", fixture + "/output.npy",
                 GetParam() + " --model-dir", kRelativeTolerance);

  r = RunCommand(BraidBinary(BRAID_RUN_BINARY) + " " + fixture + "/model.onnx --input data=" +
                 fixture + "/input.npy --executor dag --threads 2 --memory-plan on " +
                 "--save-outputs " + work + "/onnx_out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectNpyClose(work + "/onnx_out/prob.npy", fixture + "/output.npy", GetParam() + ".onnx dag",
                 kRelativeTolerance);
}

INSTANTIATE_TEST_SUITE_P(TorchExports, OnnxFixtureTest,
                         ::testing::Values("ceil_pool", "mobile_block", "small_cnn",
                                           "dynamo_small_cnn", "dynamo_opset18_ops"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace braid
