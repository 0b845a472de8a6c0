// Training from the application's own data (TrainerOptions::data = "source",
// include/braid/data_source.h): a DataSource serving Fashion-MNIST's images normalised as braid's
// IDX reader normalises them trains to the same losses, bit for bit, as the IDX path (same seed:
// same order), on one device and data parallel on two; sources the Trainer cannot read and a Read
// that fails mid-run come back as a Status naming the set.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
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
#include "testing/same_training.h"

namespace braid {
namespace {

namespace fs = std::filesystem;

const char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

// Examples [first, first + count) of a LabeledImages set, pixels normalised as the IDX reader
// does; Read fails from example fail_from on, adds label_offset to the labels, and notes when
// another Read of this object is running.
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
    if (inside_.exchange(true)) overlapped = true;
    if (index >= fail_from) {
      inside_ = false;
      return Status::IoError("lost example " + std::to_string(index));
    }
    const int64_t i = first_ + index;
    normalise_.Apply(images_->Image(i), images_->image_size(), static_cast<float*>(slots[0]));
    *static_cast<int32_t*>(slots[1]) = images_->labels[static_cast<size_t>(i)] + label_offset;
    ++reads;
    inside_ = false;
    return Status::OK();
  }

  int64_t fail_from = INT64_MAX;
  int32_t label_offset = 0;
  std::atomic<bool> overlapped{false};
  std::atomic<int64_t> reads{0};

 private:
  std::shared_ptr<const LabeledImages> images_;
  int64_t first_, count_;
  PixelNormalisation normalise_;
  std::atomic<bool> inside_{false};
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
    ExpectSameTraining(*idx, *app, 7);
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
  class Smaller final : public DataSource {  // 1x14x14 images beside the train set's 1x28x28
   public:
    int64_t size() const override { return 4; }
    std::vector<DataField> fields() const override {
      return {{"image", DType::kFloat32, {1, 14, 14}}, {"label", DType::kInt32, {}}};
    }
    Status Read(int64_t, const std::vector<void*>&) override { return Status::OK(); }
  };
  o.source.test = std::make_shared<Smaller>();
  s = Trainer::Create(o, &trainer);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("the test source's images are [1,14,14] but the train source's are "
                             "[1," +
                             std::to_string(images_->height) + ","),
            std::string::npos)
      << s.ToString();
}

TEST_F(DataSourceTrainingTest, ALabelBeyondTheClassesStopsTheStepNamingIt) {
  auto source = std::make_shared<ImagesSource>(images_, 0, 40);
  source->label_offset = 10;  // Fashion-MNIST's 0..9 become 10..19, of 10 classes
  TrainerOptions o;
  o.data = "source";
  o.source = {source, std::make_shared<ImagesSource>(images_, 0, 40), 10};
  o.model = "resnet20";
  o.batch_size = 8;
  o.iterations = 1;
  o.execution.intra_op_threads = 1;
  std::unique_ptr<Trainer> trainer;
  ASSERT_TRUE(Trainer::Create(o, &trainer).ok());
  const Status s = trainer->Step();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("] = 1"), std::string::npos) << s.ToString();  // 10..19
  EXPECT_NE(s.message().find(" is not in [0, 10)"), std::string::npos) << s.ToString();
}

// One object as the train and the test set: the train reader reads ahead while Evaluate reads the
// test set, and braid must still call Read one at a time.
TEST_F(DataSourceTrainingTest, OneObjectAsBothSetsIsNeverReadTwiceAtOnce) {
  auto source = std::make_shared<ImagesSource>(images_, 0, 64);
  TrainerOptions o;
  o.data = "source";
  o.source = {source, source, 10};
  o.model = "resnet20";
  o.batch_size = 8;
  o.test_batch_size = 16;
  o.iterations = 2;
  o.execution.intra_op_threads = 1;
  std::unique_ptr<Trainer> trainer;
  ASSERT_TRUE(Trainer::Create(o, &trainer).ok());
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(trainer->Step().ok());
    double accuracy = 0, loss = 0;
    ASSERT_TRUE(trainer->Evaluate(&accuracy, &loss).ok());
  }
  EXPECT_FALSE(source->overlapped);
  EXPECT_GE(source->reads.load(), 3 * (8 + 64));
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
