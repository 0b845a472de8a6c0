// Tests of braid_make_db (tools/braid_make_db.cc) and of training from the LMDB it writes: DBs
// from IDX files and from .npy files read back record by record, its errors and exit codes, and
// the acceptance test: a Trainer reading an LMDB made from IDX files trains to the same losses,
// bit for bit, as one reading the IDX files (same seed: same order, same normalised pixels).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "braid/status.h"
#include "braid/trainer.h"
#include "ops/data/labeled_images.h"
#include "proto/braid.pb.h"
#include "runtime/core/tensor.h"
#include "runtime/io/db.h"
#include "runtime/io/npy_file.h"
#include "testing/run_command.h"
#include "testing/same_training.h"
#include "testing/test_paths.h"

namespace braid {
namespace {

namespace fs = std::filesystem;
using braid::testing::BraidBinary;
using braid::testing::RunCommand;

const char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

std::string IdxBytes(const std::vector<uint32_t>& dims, const uint8_t* data, size_t n) {
  std::string bytes = {0, 0, 0x08, static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(d >> shift));
  }
  bytes.append(reinterpret_cast<const char*>(data), n);
  return bytes;
}

std::vector<std::pair<std::string, TensorProtos>> ReadRecords(const std::string& path) {
  std::vector<std::pair<std::string, TensorProtos>> records;
  std::unique_ptr<DbCursor> cursor = OpenDb("lmdb", path, DbMode::kRead)->NewCursor();
  for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
    TensorProtos record;
    EXPECT_TRUE(record.ParseFromString(std::string(cursor->value())));
    records.emplace_back(cursor->key(), record);
  }
  return records;
}

class LmdbDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("braid_lmdb_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // Examples [first, first + count) of `set` as the IDX files <prefix>-images-idx3-ubyte.gz and
  // <prefix>-labels-idx1-ubyte.gz (raw bytes: IdxFile reads both).
  void WriteIdx(const LabeledImages& set, int64_t first, int64_t count, const std::string& prefix) {
    std::ofstream(Path(prefix + "-images-idx3-ubyte.gz"), std::ios::binary)
        << IdxBytes({static_cast<uint32_t>(count), static_cast<uint32_t>(set.height),
                     static_cast<uint32_t>(set.width)},
                    set.Image(first), static_cast<size_t>(count * set.image_size()));
    std::vector<uint8_t> labels(set.labels.begin() + first, set.labels.begin() + first + count);
    std::ofstream(Path(prefix + "-labels-idx1-ubyte.gz"), std::ios::binary)
        << IdxBytes({static_cast<uint32_t>(count)}, labels.data(), labels.size());
  }

  std::string MakeDb(const std::string& prefix) {
    const std::string out = Path(prefix + "_lmdb");
    const auto r = RunCommand(BraidBinary(BRAID_MAKE_DB_BINARY) + " --images " +
                              Path(prefix + "-images-idx3-ubyte.gz") + " --labels " +
                              Path(prefix + "-labels-idx1-ubyte.gz") + " --out " + out +
                              " --commit-every 7");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return out;
  }

  fs::path dir_;
};

TEST_F(LmdbDataTest, MakeDbFromIdxWritesCaffe2sImageAndLabelRecords) {
  SyntheticImagesSpec spec;
  spec.count = 20;
  spec.height = 3;
  spec.width = 2;
  const LabeledImages set = MakeSyntheticImages(spec);
  WriteIdx(set, 0, 20, "train");
  const std::string db = MakeDb("train");
  const auto records = ReadRecords(db);
  ASSERT_EQ(records.size(), 20u);
  for (int i = 0; i < 20; ++i) {
    char key[16];
    std::snprintf(key, sizeof(key), "%08d", i);
    EXPECT_EQ(records[i].first, key);
    const TensorProtos& r = records[i].second;
    ASSERT_EQ(r.protos_size(), 2);
    EXPECT_EQ(r.protos(0).data_type(), TensorProto::BYTE);
    EXPECT_EQ(std::vector<int64_t>(r.protos(0).dims().begin(), r.protos(0).dims().end()),
              (std::vector<int64_t>{1, 3, 2}));
    EXPECT_EQ(r.protos(0).byte_data(),
              std::string(reinterpret_cast<const char*>(set.Image(i)), 6));
    EXPECT_EQ(r.protos(1).data_type(), TensorProto::INT32);
    EXPECT_EQ(r.protos(1).dims_size(), 0);
    ASSERT_EQ(r.protos(1).int32_data_size(), 1);
    EXPECT_EQ(r.protos(1).int32_data(0), set.labels[i]);
  }
}

TEST_F(LmdbDataTest, MakeDbFromNpyWritesOneTensorPerFileInItsType) {
  Tensor features(DType::kFloat32, {4, 2});
  Tensor ids(DType::kInt64, {4});
  for (int i = 0; i < 8; ++i) features.mutable_data<float>()[i] = 0.5f * i - 1.f;
  for (int i = 0; i < 4; ++i) ids.mutable_data<int64_t>()[i] = int64_t{1} << (33 + i);
  ASSERT_TRUE(WriteNpyFile(Path("features.npy"), features).ok());
  ASSERT_TRUE(WriteNpyFile(Path("ids.npy"), ids).ok());
  const auto r = RunCommand(BraidBinary(BRAID_MAKE_DB_BINARY) + " --npy " + Path("features.npy") +
                            "," + Path("ids.npy") + " --out " + Path("db"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote 4 records (float32[2], int64[]) to lmdb '" + Path("db") + "'"),
            std::string::npos)
      << r.output;
  const auto records = ReadRecords(Path("db"));
  ASSERT_EQ(records.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const TensorProtos& record = records[i].second;
    ASSERT_EQ(record.protos(0).float_data_size(), 2);
    EXPECT_EQ(record.protos(0).float_data(0), 0.5f * (2 * i) - 1.f);
    EXPECT_EQ(record.protos(0).float_data(1), 0.5f * (2 * i + 1) - 1.f);
    EXPECT_EQ(record.protos(1).data_type(), TensorProto::INT64);
    ASSERT_EQ(record.protos(1).int64_data_size(), 1);
    EXPECT_EQ(record.protos(1).int64_data(0), int64_t{1} << (33 + i));
  }
}

TEST_F(LmdbDataTest, MakeDbErrorsNameTheFileAndExitWithItsCodes) {
  const std::string tool = BraidBinary(BRAID_MAKE_DB_BINARY);
  auto r = RunCommand(tool + " --help");
  EXPECT_NE(r.output.find("--images"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--npy"), std::string::npos) << r.output;
  r = RunCommand(tool + " --out " + Path("db"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("give either --images and --labels"), std::string::npos) << r.output;
  r = RunCommand(tool + " --images " + Path("nope.gz") + " --labels " + Path("nope.gz") +
                 " --out " + Path("db"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find(Path("nope.gz")), std::string::npos) << r.output;
  Tensor a(DType::kUInt8, {3, 2}), b(DType::kInt32, {2});
  a.mutable_data<uint8_t>();
  b.mutable_data<int32_t>();
  ASSERT_TRUE(WriteNpyFile(Path("a.npy"), a).ok());
  ASSERT_TRUE(WriteNpyFile(Path("b.npy"), b).ok());
  r = RunCommand(tool + " --npy " + Path("a.npy") + "," + Path("b.npy") + " --out " + Path("x"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("'" + Path("b.npy") + "' holds int32[2], not an array [N, ...] with "
                          "the N of"),
            std::string::npos)
      << r.output;
  fs::create_directories(Path("exists"));
  r = RunCommand(tool + " --npy " + Path("a.npy") + " --out " + Path("exists"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("lmdb '" + Path("exists") + "' already exists"), std::string::npos)
      << r.output;
}

// The acceptance test: 120 Fashion-MNIST images (of its smaller file, t10k; synthetic ones where
// the package is absent) as IDX files, 80 to train on and 40 to test, and as the LMDBs
// braid_make_db makes from those files; the two Trainers take the same steps.
TEST_F(LmdbDataTest, TrainingFromTheLmdbMatchesTheIdxPathBitForBit) {
  const std::string d = kFashionMnistDir;
  const LabeledImages images =
      fs::exists(d + "/t10k-images-idx3-ubyte.gz")
          ? LoadIdxImages(d + "/t10k-images-idx3-ubyte.gz", d + "/t10k-labels-idx1-ubyte.gz")
          : MakeSyntheticImages({.count = 120, .seed = 1});
  WriteIdx(images, 0, 80, "train");
  WriteIdx(images, 80, 40, "t10k");
  TrainerOptions o;
  o.model = "resnet20";
  o.data_dir = dir_.string();
  o.batch_size = 16;  // 5 iterations per epoch: 7 cross into the second epoch's order
  o.test_batch_size = 20;
  o.iterations = 7;
  o.seed = 7;
  o.execution.intra_op_threads = 1;  // quick on a loaded machine; the numbers are the same
  TrainerOptions from_db = o;
  from_db.data = "lmdb";
  from_db.db.train = MakeDb("train");
  from_db.db.test = MakeDb("t10k");
  std::unique_ptr<Trainer> idx, lmdb;
  ASSERT_TRUE(Trainer::Create(o, &idx).ok());
  const Status created = Trainer::Create(from_db, &lmdb);
  ASSERT_TRUE(created.ok()) << created.ToString();
  EXPECT_EQ(lmdb->train_net().op(0).type(), "TensorProtosDBInput");
  ExpectSameTraining(*idx, *lmdb, 7);
}

TEST_F(LmdbDataTest, TrainerRefusesADbOfOtherRecordsNamingIt) {
  Tensor features(DType::kFloat32, {4, 2});
  features.mutable_data<float>();
  ASSERT_TRUE(WriteNpyFile(Path("f.npy"), features).ok());
  ASSERT_EQ(RunCommand(BraidBinary(BRAID_MAKE_DB_BINARY) + " --npy " + Path("f.npy") + " --out " +
                       Path("db"))
                .exit_code,
            0);
  TrainerOptions o;
  o.data = "lmdb";
  o.db.train = o.db.test = Path("db");
  std::unique_ptr<Trainer> trainer;
  const Status s = Trainer::Create(o, &trainer);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("lmdb '" + Path("db") + "': the trainer reads records of an image"),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("the first record holds float32[2]"), std::string::npos)
      << s.ToString();
  o.db.test = "";
  EXPECT_NE(Trainer::Create(o, &trainer).message().find("needs the train and test DBs' paths"),
            std::string::npos);
}

}  // namespace
}  // namespace braid
