// PyTorch's outputs, independently computed: each model in tests/data/onnx (written by
// tools/onnx/make_fixtures.py) is imported by braid_import, run by braid_run --model-dir on the
// committed input.npy, and its saved output compared with PyTorch's output.npy. The same model run
// straight from its .onnx file on the dag executor with the memory plan must match too.
//
// Tolerance: max |braid - PyTorch| <= 1e-4 * max |PyTorch| (float32 kernels summing in another
// order differ by a few ulps per op; these nets have under 20 ops).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "runtime/npy_file.h"
#include "testing/run_command.h"

namespace braid {
namespace {

constexpr double kRelativeTolerance = 1e-4;

using braid::testing::RunCommand;
using Result = braid::testing::CommandResult;

// Compares braid's saved output with PyTorch's, elementwise, within the stated tolerance.
void ExpectMatchesPyTorch(const std::string& braid_npy, const std::string& torch_npy,
                          const std::string& label) {
  Tensor got, want;
  Status status = ReadNpyFile(braid_npy, &got);
  ASSERT_TRUE(status.ok()) << label << ": " << status.ToString();
  status = ReadNpyFile(torch_npy, &want);
  ASSERT_TRUE(status.ok()) << label << ": " << status.ToString();
  ASSERT_EQ(got.ShapeString(), want.ShapeString()) << label;
  double scale = 0, max_abs = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.data<float>()[i], g = got.data<float>()[i];
    ASSERT_TRUE(std::isfinite(g)) << label << " element " << i;
    scale = std::max(scale, std::fabs(w));
    max_abs = std::max(max_abs, std::fabs(g - w));
  }
  std::printf("%s: %lld values, max |braid - PyTorch| %.3g, max |PyTorch| %.3g, relative %.3g\n",
              label.c_str(), static_cast<long long>(want.numel()), max_abs, scale,
              scale > 0 ? max_abs / scale : max_abs);
  EXPECT_LE(max_abs, kRelativeTolerance * scale) << label;
}

class OnnxFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxFixtureTest, MatchesPyTorchFromTheFolderAndTheOnnxFile) {
  const std::string fixture = std::string(BRAID_ONNX_FIXTURES) + "/" + GetParam();
  const std::string work = ::testing::TempDir() + "/fixture_" + GetParam();
  std::filesystem::remove_all(work);
  Result r = RunCommand(std::string(BRAID_IMPORT_BINARY) + " " + fixture + "/model.onnx --out " +
                        work + "/zoo");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = RunCommand(std::string(BRAID_RUN_BINARY) + " --model-dir " + work + "/zoo --input data=" +
                 fixture + "/input.npy --save-outputs " + work + "/folder_out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("top-5 prob image 0:"), std::string::npos) << r.output;
  ExpectMatchesPyTorch(work + "/folder_out/prob.npy", fixture + "/output.npy",
                       GetParam() + " --model-dir");

  r = RunCommand(std::string(BRAID_RUN_BINARY) + " " + fixture + "/model.onnx --input data=" +
                 fixture + "/input.npy --executor dag --threads 2 --memory-plan on " +
                 "--save-outputs " + work + "/onnx_out");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectMatchesPyTorch(work + "/onnx_out/prob.npy", fixture + "/output.npy",
                       GetParam() + ".onnx dag");
}

INSTANTIATE_TEST_SUITE_P(TorchExports, OnnxFixtureTest,
                         ::testing::Values("ceil_pool", "mobile_block", "small_cnn"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace braid
