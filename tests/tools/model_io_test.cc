// The public model I/O API (include/braid/model_io.h): an ONNX export imported, written as a model
// folder, loaded back and served equal to PyTorch's output; .npy arrays read and written; errors
// as a Status naming the file.
#include "braid/model_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "braid/predictor.h"
#include "testing/test_paths.h"

namespace braid {
namespace {

namespace fs = std::filesystem;

std::string Fixture(const std::string& file) {
  return braid::testing::TestData(BRAID_ONNX_FIXTURES, "tests/data/onnx") + "/small_cnn/" + file;
}

fs::path FreshDir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("braid_model_io_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  return dir;
}

TEST(PublicModelIoTest, AnOnnxExportRoundTripsThroughAFolderAndAnswersAsPyTorch) {
  ModelFolder imported;
  Status s = ImportOnnxFile(Fixture("model.onnx"), {}, &imported);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const fs::path dir = FreshDir("folder");
  ASSERT_TRUE(WriteModelFolder(dir.string(), imported).ok());
  ModelFolder loaded;
  ASSERT_TRUE(LoadModelFolder(dir.string(), &loaded).ok());
  EXPECT_EQ(loaded.predict_net.SerializeAsString(), imported.predict_net.SerializeAsString());
  ASSERT_EQ(loaded.inputs.size(), 1u);

  NpyArray input, expected;
  ASSERT_TRUE(ReadNpyFile(Fixture("input.npy"), &input).ok());
  ASSERT_TRUE(ReadNpyFile(Fixture("output.npy"), &expected).ok());
  ASSERT_NE(input.data<float>(), nullptr);
  EXPECT_EQ(input.shape, loaded.inputs[0].shape);
  std::unique_ptr<Predictor> predictor;
  ASSERT_TRUE(Predictor::FromModelFolder(dir.string(), {}, &predictor).ok());
  std::map<std::string, OutputTensor> outputs;
  s = predictor->Run({{loaded.inputs[0].name, InputView::Of(input.data<float>(), input.shape)}},
                     &outputs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const OutputTensor& out = outputs.begin()->second;
  ASSERT_EQ(out.shape, expected.shape);
  for (int64_t i = 0; i < expected.numel(); ++i) {
    EXPECT_NEAR(out.data<float>()[i], expected.data<float>()[i],
                1e-4 * (1 + std::fabs(expected.data<float>()[i])));
  }
  fs::remove_all(dir);
}

TEST(PublicModelIoTest, NpyArraysRoundTripAndMismatchedBytesAreRefused) {
  const fs::path dir = FreshDir("npy");
  fs::create_directories(dir);
  NpyArray ints{DType::kInt64, {2, 3}, std::vector<uint8_t>(6 * sizeof(int64_t))};
  for (int i = 0; i < 6; ++i) reinterpret_cast<int64_t*>(ints.bytes.data())[i] = -i * 1000;
  ASSERT_TRUE(WriteNpyFile((dir / "ints.npy").string(), ints).ok());
  NpyArray back;
  ASSERT_TRUE(ReadNpyFile((dir / "ints.npy").string(), &back).ok());
  EXPECT_EQ(back.dtype, DType::kInt64);
  EXPECT_EQ(back.shape, ints.shape);
  EXPECT_EQ(back.bytes, ints.bytes);
  EXPECT_EQ(back.data<float>(), nullptr);

  NpyArray short_of_bytes{DType::kFloat32, {4}, std::vector<uint8_t>(12)};
  Status s = WriteNpyFile((dir / "bad.npy").string(), short_of_bytes);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("holds 16 bytes, not 12"), std::string::npos) << s.ToString();
  EXPECT_FALSE(fs::exists(dir / "bad.npy"));
  s = ReadNpyFile((dir / "missing.npy").string(), &back);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("missing.npy"), std::string::npos) << s.ToString();
  fs::remove_all(dir);
}

TEST(PublicModelIoTest, AnUnwritableFolderIsAStatusNamingIt) {
  const fs::path dir = FreshDir("blocked");
  fs::create_directories(dir);
  {
    std::FILE* f = std::fopen((dir / "file").c_str(), "w");
    std::fclose(f);
  }
  const Status s = WriteModelFolder((dir / "file" / "model").string(), ModelFolder{});
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("file/model"), std::string::npos) << s.ToString();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace braid
