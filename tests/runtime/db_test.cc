// Tests of runtime/io/db.h over LMDB and of the TensorProtos records it holds
// (runtime/io/tensor_protos_record.h): round trips, batched commits, and errors that name the DB,
// LMDB's text and the record's key.
#include "runtime/io/db.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "braid/status.h"
#include "proto/braid.pb.h"
#include "runtime/io/tensor_protos_record.h"

namespace braid {
namespace {

namespace fs = std::filesystem;

class DbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("braid_db_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

std::vector<std::pair<std::string, std::string>> ReadAll(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> records;
  std::unique_ptr<DbCursor> cursor = OpenDb("lmdb", path, DbMode::kRead)->NewCursor();
  for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next()) {
    records.emplace_back(cursor->key(), cursor->value());
  }
  return records;
}

TEST_F(DbTest, RoundTripsRecordsInKeyOrderAcrossBatchedCommits) {
  const std::string path = Path("db");
  std::vector<std::pair<std::string, std::string>> written;
  {
    std::unique_ptr<Db> db = OpenDb("lmdb", path, DbMode::kNew);
    std::unique_ptr<DbTransaction> txn = db->NewTransaction();
    for (int i = 9; i >= 0; --i) {  // written out of order: read back sorted
      const std::string key = "k" + std::to_string(i);
      const std::string value(static_cast<size_t>(i * 1000), static_cast<char>('a' + i));
      txn->Put(key, value);
      written.insert(written.begin(), {key, value});
      if (i % 3 == 0) txn->Commit();
    }
  }
  EXPECT_EQ(ReadAll(path), written);
  std::unique_ptr<Db> db = OpenDb("lmdb", path, DbMode::kRead);
  EXPECT_EQ(db->Count(), 10);
  std::unique_ptr<DbCursor> cursor = db->NewCursor();
  cursor->Seek("k5");
  ASSERT_TRUE(cursor->Valid());
  EXPECT_EQ(cursor->key(), "k5");
  EXPECT_EQ(cursor->value(), written[5].second);
  cursor->Seek("k99");  // after every key
  EXPECT_FALSE(cursor->Valid());
}

TEST_F(DbTest, UncommittedPutsAreDroppedAndWriteModeAddsToAnExistingDb) {
  const std::string path = Path("db");
  {
    std::unique_ptr<Db> db = OpenDb("lmdb", path, DbMode::kNew);
    std::unique_ptr<DbTransaction> txn = db->NewTransaction();
    txn->Put("a", "1");
    txn->Commit();
    txn->Put("b", "2");  // never committed
  }
  {
    std::unique_ptr<Db> db = OpenDb("lmdb", path, DbMode::kWrite);
    std::unique_ptr<DbTransaction> txn = db->NewTransaction();
    txn->Put("c", "3");
    txn->Commit();
  }
  EXPECT_EQ(ReadAll(path), (std::vector<std::pair<std::string, std::string>>{{"a", "1"},
                                                                             {"c", "3"}}));
}

// A writer's map starts at 256 MiB (runtime/io/lmdb_db.cc): 320 MiB of records, committed in
// batches, outgrow it, and every put survives the growth.
TEST_F(DbTest, GrowsTheMapPastItsFirstSizeWithoutLosingPuts) {
  const std::string path = Path("big");
  {
    std::unique_ptr<Db> db = OpenDb("lmdb", path, DbMode::kNew);
    std::unique_ptr<DbTransaction> txn = db->NewTransaction();
    for (int i = 0; i < 320; ++i) {
      txn->Put("k" + std::to_string(1000 + i), std::string(size_t{1} << 20, static_cast<char>(i)));
      if (i % 100 == 99) txn->Commit();
    }
    txn->Commit();
  }
  std::unique_ptr<Db> db = OpenDb("lmdb", path, DbMode::kRead);
  EXPECT_EQ(db->Count(), 320);
  std::unique_ptr<DbCursor> cursor = db->NewCursor();
  int i = 0;
  for (cursor->SeekToFirst(); cursor->Valid(); cursor->Next(), ++i) {
    ASSERT_EQ(cursor->value().size(), size_t{1} << 20);
    EXPECT_EQ(cursor->value()[12345], static_cast<char>(i)) << cursor->key();
  }
  EXPECT_EQ(i, 320);
}

// What LMDB forbids is an error, never a hang or undefined behaviour: a second writer of one DB
// (LMDB would wait for the first forever), and growing the map under an open cursor.
TEST_F(DbTest, ASecondWriterOrAGrowthUnderAnOpenCursorIsRefused) {
  const std::string path = Path("guarded");
  std::unique_ptr<Db> db = OpenDb("lmdb", path, DbMode::kNew);
  {
    std::unique_ptr<DbTransaction> first = db->NewTransaction();
    try {
      db->NewTransaction();
      ADD_FAILURE() << "a second transaction was opened";
    } catch (const Error& e) {
      EXPECT_EQ(e.status().code(), StatusCode::kFailedPrecondition);
      EXPECT_NE(e.status().message().find("a transaction of this DB is open"), std::string::npos)
          << e.status().ToString();
    }
    first->Put("a", "1");
    first->Commit();
  }
  std::unique_ptr<DbCursor> cursor = db->NewCursor();  // from here on, the map cannot grow
  std::unique_ptr<DbTransaction> txn = db->NewTransaction();
  Status failed;
  for (int i = 0; i < 320 && failed.ok(); ++i) {
    try {
      txn->Put("k" + std::to_string(1000 + i), std::string(size_t{1} << 20, 'x'));
    } catch (const Error& e) {
      failed = e.status();
    }
  }
  EXPECT_EQ(failed.code(), StatusCode::kFailedPrecondition) << failed.ToString();
  EXPECT_NE(failed.message().find("the map is full and must grow"), std::string::npos)
      << failed.ToString();
  try {
    txn->Commit();
    ADD_FAILURE() << "a transaction that lost its puts committed";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("the map could not grow"), std::string::npos)
        << e.status().ToString();
  }
  cursor->SeekToFirst();
  ASSERT_TRUE(cursor->Valid());
  EXPECT_EQ(cursor->key(), "a");
  cursor.reset();
  txn.reset();
  std::unique_ptr<DbTransaction> after = db->NewTransaction();  // the old one is gone
  after->Put("b", "2");
  after->Commit();
  EXPECT_EQ(db->Count(), 2);
}

// LMDB's write lock belongs to the thread that began the transaction: another thread's Put is
// refused instead of unlocking a mutex it does not own.
TEST_F(DbTest, ATransactionIsUsedOnTheThreadThatOpenedIt) {
  std::unique_ptr<Db> db = OpenDb("lmdb", Path("threads"), DbMode::kNew);
  std::unique_ptr<DbTransaction> txn = db->NewTransaction();
  Status other;
  std::thread([&] {
    try {
      txn->Put("a", "1");
    } catch (const Error& e) {
      other = e.status();
    }
  }).join();
  EXPECT_EQ(other.code(), StatusCode::kFailedPrecondition) << other.ToString();
  EXPECT_NE(other.message().find("used on the thread that opened it"), std::string::npos)
      << other.ToString();
  txn->Put("b", "2");
  txn->Commit();
  EXPECT_EQ(db->Count(), 1);
}

TEST_F(DbTest, ErrorsNameThePathAndWhatIsWrong) {
  Status s = StatusFromCall([&] { OpenDb("lmdb", Path("missing"), DbMode::kRead); });
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find("lmdb '" + Path("missing") + "' does not exist"), std::string::npos)
      << s.ToString();

  s = StatusFromCall([&] { OpenDb("leveldb", Path("x"), DbMode::kRead); });
  EXPECT_NE(s.message().find("unknown db_type 'leveldb'"), std::string::npos) << s.ToString();

  const std::string made = Path("made");
  OpenDb("lmdb", made, DbMode::kNew);
  s = StatusFromCall([&] { OpenDb("lmdb", made, DbMode::kNew); });
  EXPECT_NE(s.message().find("already exists"), std::string::npos) << s.ToString();
  s = StatusFromCall([&] { OpenDb("lmdb", made, DbMode::kRead)->NewTransaction(); });
  EXPECT_NE(s.message().find("was opened for reading"), std::string::npos) << s.ToString();

  // A directory whose data.mdb is not an LMDB: LMDB's own text, with the path.
  const std::string corrupt = Path("corrupt");
  fs::create_directories(corrupt);
  std::ofstream(corrupt + "/data.mdb") << std::string(8192, 'x');
  s = StatusFromCall([&] { OpenDb("lmdb", corrupt, DbMode::kRead); });
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
  EXPECT_NE(s.message().find("lmdb '" + corrupt + "': mdb_env_open failed: "), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("MDB_INVALID"), std::string::npos) << s.ToString();
}

TEST(TensorProtosRecordTest, ReadsTheFieldsCaffe2Writes) {
  TensorProtos record;
  TensorProto* image = record.add_protos();  // make_mnist_db's image: BYTE in byte_data
  image->set_data_type(TensorProto::BYTE);
  image->add_dims(1);
  image->add_dims(2);
  image->set_byte_data(std::string("\x07\xff", 2));
  TensorProto* label = record.add_protos();  // its label: an INT32 scalar
  label->set_data_type(TensorProto::INT32);
  label->add_int32_data(-3);
  TensorProto* raw = record.add_protos();  // float32 as raw_data
  raw->set_data_type(TensorProto::FLOAT);
  raw->add_dims(2);
  const float values[2] = {1.5f, -2.f};
  raw->set_raw_data(values, sizeof(values));

  TensorProtos parsed;
  ParseRecord(record.SerializeAsString(), "r", &parsed);
  const RecordTensor t0 = RecordTensorOf(parsed.protos(0), "r");
  EXPECT_EQ(t0.ToString(), "uint8[1,2]");
  uint8_t pixels[2];
  CopyRecordValues(parsed.protos(0), t0, pixels, "r");
  EXPECT_EQ(pixels[0], 7);
  EXPECT_EQ(pixels[1], 255);
  const RecordTensor t1 = RecordTensorOf(parsed.protos(1), "r");
  EXPECT_EQ(t1.ToString(), "int32[]");
  int32_t l = 0;
  CopyRecordValues(parsed.protos(1), t1, reinterpret_cast<uint8_t*>(&l), "r");
  EXPECT_EQ(l, -3);
  float f[2];
  CopyRecordValues(parsed.protos(2), RecordTensorOf(parsed.protos(2), "r"),
                   reinterpret_cast<uint8_t*>(f), "r");
  EXPECT_EQ(f[0], 1.5f);
  EXPECT_EQ(f[1], -2.f);
}

TEST(TensorProtosRecordTest, RefusesValuesThatDoNotFillTheDimsOrAreNotARecord) {
  TensorProto proto;
  proto.set_data_type(TensorProto::FLOAT);
  proto.add_dims(3);
  proto.add_float_data(1.f);
  float out[3];
  Status s = StatusFromCall([&] {
    CopyRecordValues(proto, RecordTensorOf(proto, "db record 'k7'"),
                     reinterpret_cast<uint8_t*>(out), "db record 'k7'");
  });
  EXPECT_NE(s.message().find("db record 'k7': tensor float32[3] holds 1 values in float_data, "
                             "not 3"),
            std::string::npos)
      << s.ToString();
  TensorProtos record;
  s = StatusFromCall([&] { ParseRecord("\xff\xff\xff", "db record 'k8'", &record); });
  EXPECT_NE(s.message().find("db record 'k8': the value (3 bytes) is not a serialized "
                             "TensorProtos"),
            std::string::npos)
      << s.ToString();
  proto.set_data_type(TensorProto::STRING);
  s = StatusFromCall([&] { RecordTensorOf(proto, "w"); });
  EXPECT_NE(s.message().find("data_type 4 (STRING) is not one braid reads"), std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace braid
