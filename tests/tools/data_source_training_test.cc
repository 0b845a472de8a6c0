// Training from the application's own data (TrainerOptions::data = "source",
// include/braid/data_source.h): a DataSource serving Fashion-MNIST's images normalised as braid's
// IDX reader normalises them trains to the same losses, bit for bit, as the IDX path (same seed:
// same order), on one device and data parallel on two; sources the Trainer cannot read and a Read
// that fails mid-run come back as a Status naming the set.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "braid/data_source.h"
#include "braid/status.h"
#include "braid/trainer.h"
#include "ops/data/labeled_images.h"
#include "ops/data/pixel_normalisation.h"
#include "proto/braid.pb.h"

namespace braid {
namespace {

namespace fs = std::filesystem;

const char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

// Examples [first, first + count) of a LabeledImages set, pixels normalised as the IDX reader
// does; Read fails from example fail_from on.
class ImagesSource final : public DataSource {
 public:
  ImagesSource(std::shared_ptr<const LabeledImages> images, int64_t first, int64_t count)
      : images_(std::move(images)), first_(first), count_(count), normalise_(0.2860f, 0.3530f) {}

  int64_t size() const override { return count_; }
  std::vector<DataField> fields() const override {
    return {{"image", DType::kFloat32, {images_->channels, images_->height, images_->width}},
            {"label", DType::kInt32, {}}};
  }
  Status Read(int64_t index, const std::vector<void*>& slots) override {
    if (index >= fail_from) return Status::IoError("lost example " + std::to_string(index));
    const int64_t i = first_ + index;
    normalise_.Apply(images_->Image(i), images_->image_size(), static_cast<float*>(slots[0]));
    *static_cast<int32_t*>(slots[1]) = images_->labels[static_cast<size_t>(i)];
    return Status::OK();
  }

  int64_t fail_from = INT64_MAX;

 private:
  std::shared_ptr<const LabeledImages> images_;
  int64_t first_, count_;
  PixelNormalisation normalise_;
};

// Writes examples [first, first + count) of `set` as raw IDX files (IdxFile reads them ungzipped).
void WriteIdx(const LabeledImages& set, int64_t first, int64_t count, const std::string& prefix) {
  auto header = [](std::vector<uint32_t> dims) {
    std::string bytes = {0, 0, 0x08, static_cast<char>(dims.size())};
    for (uint32_t d : dims) {
      for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(d >> shift));
    }
    return bytes;
  };
  std::ofstream(prefix + "-images-idx3-ubyte.gz", std::ios::binary)
      << header({static_cast<uint32_t>(count), static_cast<uint32_t>(set.height),
                 static_cast<uint32_t>(set.width)})
      << std::string(reinterpret_cast<const char*>(set.Image(first)),
                     static_cast<size_t>(count * set.image_size()));
  std::ofstream(prefix + "-labels-idx1-ubyte.gz", std::ios::binary)
      << header({static_cast<uint32_t>(count)})
      << std::string(set.labels.begin() + first, set.labels.begin() + first + count);
}

class DataSourceTrainingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("braid_source_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::string d = kFashionMnistDir;
    images_ = std::make_shared<LabeledImages>(
        fs::exists(d + "/t10k-images-idx3-ubyte.gz")
            ? LoadIdxImages(d + "/t10k-images-idx3-ubyte.gz", d + "/t10k-labels-idx1-ubyte.gz")
            : MakeSyntheticImages({.count = 120, .seed = 1}));
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The same run from IDX files of 80 + 40 images and from sources of the same images.
  void ExpectTheIdxPathsNumbers(const std::vector<std::string>& devices) {
    WriteIdx(*images_, 0, 80, (dir_ / "train").string());
    WriteIdx(*images_, 80, 40, (dir_ / "t10k").string());
    TrainerOptions o;
    o.model = "resnet20";
    o.data_dir = dir_.string();
    o.devices = devices;
    o.batch_size = 16;  // 5 iterations per epoch: 7 cross into the second epoch's order
    o.test_batch_size = 20;
    o.iterations = 7;
    o.seed = 7;
    o.execution.intra_op_threads = 1;
    TrainerOptions from_source = o;
    from_source.data = "source";
    from_source.source.train = std::make_shared<ImagesSource>(images_, 0, 80);
    from_source.source.test = std::make_shared<ImagesSource>(images_, 80, 40);
    std::unique_ptr<Trainer> idx, app;
    ASSERT_TRUE(Trainer::Create(o, &idx).ok());
    const Status created = Trainer::Create(from_source, &app);
    ASSERT_TRUE(created.ok()) << created.ToString();
    EXPECT_EQ(app->train_net().op(0).type(), "DataSourceInput");
    for (int step = 0; step < 7; ++step) {
      double idx_loss = 0, app_loss = 0;
      ASSERT_TRUE(idx->Step(&idx_loss).ok());
      ASSERT_TRUE(app->Step(&app_loss).ok());
      EXPECT_EQ(idx_loss, app_loss) << "step " << step;
    }
    double idx_accuracy = 0, idx_loss = 0, app_accuracy = 0, app_loss = 0;
    ASSERT_TRUE(idx->Evaluate(&idx_accuracy, &idx_loss).ok());
    ASSERT_TRUE(app->Evaluate(&app_accuracy, &app_loss).ok());
    EXPECT_EQ(idx_accuracy, app_accuracy);
    EXPECT_EQ(idx_loss, app_loss);
  }

  fs::path dir_;
  std::shared_ptr<LabeledImages> images_;
};

TEST_F(DataSourceTrainingTest, TrainsBitForBitAsTheIdxPathOnOneDevice) {
  ExpectTheIdxPathsNumbers({"cpu:0"});
}

TEST_F(DataSourceTrainingTest, TrainsBitForBitAsTheIdxPathDataParallelOnTwoDevices) {
  ExpectTheIdxPathsNumbers({"cpu:0", "cpu:1"});
}

TEST_F(DataSourceTrainingTest, SourcesTheTrainerCannotReadAreAStatusNamingTheSet) {
  class Pixels final : public DataSource {  // uint8 images: the trainer wants float32
   public:
    int64_t size() const override { return 4; }
    std::vector<DataField> fields() const override {
      return {{"pixels", DType::kUInt8, {1, 4, 4}}, {"label", DType::kInt32, {}}};
    }
    Status Read(int64_t, const std::vector<void*>&) override { return Status::OK(); }
  };
  TrainerOptions o;
  o.data = "source";
  o.source.train = std::make_shared<ImagesSource>(images_, 0, 80);
  std::unique_ptr<Trainer> trainer;
  Status s = Trainer::Create(o, &trainer);
  EXPECT_NE(s.message().find("data source needs the train and test sources"), std::string::npos)
      << s.ToString();
  o.source.test = std::make_shared<Pixels>();
  s = Trainer::Create(o, &trainer);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("the test source: the trainer reads examples of two fields"),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("pixels uint8[1,4,4], label int32[]"), std::string::npos)
      << s.ToString();
  o.source.test = std::make_shared<ImagesSource>(images_, 0, 0);
  s = Trainer::Create(o, &trainer);
  EXPECT_NE(s.message().find("the test source: data source 'trainer/test/"), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("holds 0 examples"), std::string::npos) << s.ToString();
}

TEST_F(DataSourceTrainingTest, AReadFailingMidRunStopsTheStepWithItsStatus) {
  // One object as both sets (braid serialises its Reads); examples from 20 on fail.
  auto source = std::make_shared<ImagesSource>(images_, 0, 40);
  source->fail_from = 20;
  TrainerOptions o;
  o.data = "source";
  o.source = {source, source, 10};
  o.model = "resnet20";
  o.batch_size = 8;
  o.iterations = 5;
  o.execution.intra_op_threads = 1;
  o.seed = 0;
  std::unique_ptr<Trainer> trainer;
  const Status created = Trainer::Create(o, &trainer);
  ASSERT_TRUE(created.ok()) << created.ToString();
  Status s;
  int steps = 0;
  while (steps < 5 && (s = trainer->Step()).ok()) ++steps;
  EXPECT_LT(steps, 5);  // shuffled: a failing example comes within the first 40
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
  EXPECT_NE(s.message().find("DataSourceInput"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("data source 'trainer/train/"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(": lost example "), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace braid
