// Tests of TensorProtosDBInput and CreateDB (ops/data/tensor_protos_db_input_op.h,
// create_db_op.h) on small LMDBs each test writes: batches in key order, the same shuffled
// stream and normalised bits as IdxImageInput's prefetcher, shards, Caffe2's two-op form, and
// errors that name the DB and the record's key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "braid/status.h"
#include "ops/data/batch_prefetcher.h"
#include "ops/data/labeled_images.h"
#include "proto/braid.pb.h"
#include "runtime/core/shape_inference.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"
#include "runtime/io/db.h"
#include "runtime/io/proto_io.h"

namespace braid {
namespace {

namespace fs = std::filesystem;

// Record i: image uint8 [1, 2, 2] of pixels 10 * i + p, label int32 scalar i % 7.
TensorProtos NumberedRecord(int i, const std::vector<int64_t>& dims = {1, 2, 2}) {
  TensorProtos record;
  TensorProto* image = record.add_protos();
  image->set_data_type(TensorProto::BYTE);
  int64_t n = 1;
  for (int64_t d : dims) {
    image->add_dims(d);
    n *= d;
  }
  std::string pixels;
  for (int64_t p = 0; p < n; ++p) pixels.push_back(static_cast<char>(10 * i + p));
  image->set_byte_data(pixels);
  TensorProto* label = record.add_protos();
  label->set_data_type(TensorProto::INT32);
  label->add_int32_data(i % 7);
  return record;
}

std::string Key(int i) {
  char key[16];
  std::snprintf(key, sizeof(key), "%08d", i);
  return key;
}

class TensorProtosDbInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("braid_dbinput_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A DB of `count` records; value(i) gives record i's bytes.
  std::string WriteDb(int count, const std::function<std::string(int)>& value) {
    const std::string path = (dir_ / "db").string();
    std::unique_ptr<Db> db = OpenDb("lmdb", path, DbMode::kNew);
    std::unique_ptr<DbTransaction> txn = db->NewTransaction();
    for (int i = 0; i < count; ++i) txn->Put(Key(i), value(i));
    txn->Commit();
    return path;
  }
  std::string WriteNumberedDb(int count) {
    return WriteDb(count, [](int i) { return NumberedRecord(i).SerializeAsString(); });
  }

  fs::path dir_;
};

NetDef ParseNet(const std::string& text) {
  NetDef net;
  ParseTextProto("name: 'reader' " + text, "<test>", &net);
  return net;
}

std::string ReaderOp(const std::string& db, int batch_size, const std::string& extra = "") {
  return "op { type: 'TensorProtosDBInput' name: 'in' output: 'data' output: 'label' "
         "arg { name: 'db' s: '" + db + "' } arg { name: 'db_type' s: 'lmdb' } "
         "arg { name: 'batch_size' i: " + std::to_string(batch_size) + " } " + extra + " }";
}

TEST_F(TensorProtosDbInputTest, ServesRecordsInKeyOrderWithInferredShapes) {
  const std::string db = WriteNumberedDb(10);
  const NetDef def = ParseNet(ReaderOp(db, 4));
  const auto shapes = InferBlobShapes(def, {});
  EXPECT_EQ(shapes.at("data").dims, (std::vector<int64_t>{4, 1, 2, 2}));
  EXPECT_EQ(shapes.at("data").dtype, DType::kUInt8);
  EXPECT_EQ(shapes.at("label").dims, (std::vector<int64_t>{4}));
  EXPECT_EQ(shapes.at("label").dtype, DType::kInt32);
  Workspace ws;
  Net* net = ws.CreateNet(def);
  int next = 0;
  for (int step = 0; step < 4; ++step) {  // 16 examples: the stream wraps after 10
    ASSERT_TRUE(net->Run().ok());
    const Tensor& data = *ws.GetBlob("data");
    ASSERT_EQ(data.shape(), (std::vector<int64_t>{4, 1, 2, 2}));
    for (int b = 0; b < 4; ++b, next = (next + 1) % 10) {
      for (int p = 0; p < 4; ++p) EXPECT_EQ(data.data<uint8_t>()[b * 4 + p], 10 * next + p);
      EXPECT_EQ(ws.GetBlob("label")->data<int32_t>()[b], next % 7);
    }
  }
}

// With shuffle, seed, mean and std, the op serves the bits BatchPrefetcher serves IdxImageInput
// for the same images: same order, same normalisation.
TEST_F(TensorProtosDbInputTest, ShuffledNormalisedStreamIsIdxImageInputsBitForBit) {
  const int count = 13;
  const std::string db = WriteNumberedDb(count);
  auto images = std::make_shared<LabeledImages>();
  images->count = count;
  images->height = images->width = 2;
  for (int i = 0; i < count; ++i) {
    const TensorProtos record = NumberedRecord(i);
    const TensorProto& image = record.protos(0);
    images->pixels.insert(images->pixels.end(), image.byte_data().begin(), image.byte_data().end());
    images->labels.push_back(i % 7);
  }
  BatchPrefetcher::Options o;
  o.batch_size = 5;
  o.seed = 11;
  o.mean = 0.2860f;
  o.std = 0.3530f;
  BatchPrefetcher idx(images, o);
  Workspace ws;
  Net* net = ws.CreateNet(ParseNet(ReaderOp(
      db, 5, "arg { name: 'shuffle' i: 1 } arg { name: 'seed' i: 11 } "
             "arg { name: 'mean' f: 0.2860 } arg { name: 'std' f: 0.3530 }")));
  std::vector<float> data(5 * 4);
  std::vector<int32_t> labels(5);
  bool shuffled = false;
  for (int step = 0; step < 6; ++step) {  // 30 examples: three epochs' orders
    idx.NextBatch(data.data(), labels.data());
    ASSERT_TRUE(net->Run().ok());
    const Tensor& got = *ws.GetBlob("data");
    ASSERT_EQ(got.dtype(), DType::kFloat32);
    ASSERT_EQ(got.numel(), 20);
    EXPECT_EQ(std::memcmp(got.data<float>(), data.data(), data.size() * sizeof(float)), 0)
        << "step " << step;
    EXPECT_EQ(std::vector<int32_t>(ws.GetBlob("label")->data<int32_t>(),
                                   ws.GetBlob("label")->data<int32_t>() + 5),
              labels);
    shuffled = shuffled || labels != std::vector<int32_t>{0, 1, 2, 3, 4};
  }
  EXPECT_TRUE(shuffled);
}

TEST_F(TensorProtosDbInputTest, ShardsAreSlicesOfTheGlobalBatch) {
  const std::string db = WriteNumberedDb(11);
  Workspace ws;
  Net* whole = ws.CreateNet(ParseNet(ReaderOp(db, 6, "arg { name: 'shuffle' i: 1 }")));
  std::vector<Net*> shards;
  for (int r = 0; r < 3; ++r) {
    NetDef def = ParseNet(ReaderOp(db, 2, "arg { name: 'shuffle' i: 1 } arg { name: 'num_shards' "
                                          "i: 3 } arg { name: 'shard_id' i: " +
                                              std::to_string(r) + " }"));
    def.set_name("shard" + std::to_string(r));
    def.mutable_op(0)->set_output(0, "data" + std::to_string(r));
    def.mutable_op(0)->set_output(1, "label" + std::to_string(r));
    shards.push_back(ws.CreateNet(def));
  }
  for (int step = 0; step < 4; ++step) {
    ASSERT_TRUE(whole->Run().ok());
    for (int r = 0; r < 3; ++r) {
      ASSERT_TRUE(shards[r]->Run().ok());
      const Tensor& part = *ws.GetBlob("data" + std::to_string(r));
      EXPECT_EQ(std::memcmp(part.data<uint8_t>(), ws.GetBlob("data")->data<uint8_t>() + r * 8, 8),
                0)
          << "shard " << r << " step " << step;
    }
  }
}

TEST_F(TensorProtosDbInputTest, Caffe2sCreateDbFormReadsTheSameStream) {
  const std::string db = WriteNumberedDb(6);
  const std::string create =
      "op { type: 'CreateDB' output: 'dbreader' arg { name: 'db_type' s: 'lmdb' } "
      "arg { name: 'db' s: '" + db + "' } }";
  const std::string read =
      "op { type: 'TensorProtosDBInput' input: 'dbreader' output: 'data' output: 'label' "
      "arg { name: 'batch_size' i: 4 } }";
  // One net: the reader opens the DB on its first run, once CreateDB has written the descriptor.
  Workspace ws;
  Net* net = ws.CreateNet(ParseNet(create + read));
  // Two nets, Caffe2's init net then its train net: the reader opens the DB when built.
  Workspace ws2;
  ASSERT_TRUE(ws2.RunNetOnce(ParseNet(create)).ok());
  Net* net2 = ws2.CreateNet(ParseNet(read));
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE(net->Run().ok());
    ASSERT_TRUE(net2->Run().ok());
    for (const Workspace* w : {&ws, &ws2}) {
      const Tensor& labels = *w->GetBlob("label");
      for (int b = 0; b < 4; ++b) EXPECT_EQ(labels.data<int32_t>()[b], ((step * 4 + b) % 6) % 7);
    }
  }
  // CreateDB on a DB that does not exist fails its run naming the path.
  Workspace ws3;
  const Status s = ws3.RunNetOnce(ParseNet(
      "op { type: 'CreateDB' output: 'r' arg { name: 'db' s: '" + db + "_missing' } }"));
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find("lmdb '" + db + "_missing' does not exist"), std::string::npos)
      << s.ToString();
}

TEST_F(TensorProtosDbInputTest, ARecordUnlikeTheFirstFailsTheRunNamingItsKey) {
  const std::string db = WriteDb(8, [](int i) {
    return (i == 5 ? NumberedRecord(i, {1, 3, 2}) : NumberedRecord(i)).SerializeAsString();
  });
  Workspace ws;
  Net* net = ws.CreateNet(ParseNet(ReaderOp(db, 4)));
  ASSERT_TRUE(net->Run().ok());  // records 0-3
  const Status s = net->Run();   // records 4-7: 5 is [1,3,2]
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("lmdb '" + db + "' record '00000005' tensor 0 is uint8[1,3,2], but "
                             "the first record's is uint8[1,2,2]"),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("TensorProtosDBInput"), std::string::npos) << s.ToString();
}

TEST_F(TensorProtosDbInputTest, ACorruptRecordFailsTheRunNamingItsKey) {
  const std::string db = WriteDb(4, [](int i) {
    return i == 2 ? std::string("\xff\xff\xff\xff", 4) : NumberedRecord(i).SerializeAsString();
  });
  Workspace ws;
  Net* net = ws.CreateNet(ParseNet(ReaderOp(db, 4)));
  const Status s = net->Run();
  EXPECT_NE(s.message().find("lmdb '" + db + "' record '00000002': the value (4 bytes) is not a "
                             "serialized TensorProtos"),
            std::string::npos)
      << s.ToString();
}

TEST_F(TensorProtosDbInputTest, BuildFailsForAMissingDbOrTheWrongNumberOfOutputs) {
  Workspace ws;
  const std::string missing = (dir_ / "nope").string();
  Status s = StatusFromCall([&] { ws.CreateNet(ParseNet(ReaderOp(missing, 2))); });
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find("lmdb '" + missing + "' does not exist"), std::string::npos)
      << s.ToString();
  const std::string db = WriteNumberedDb(3);
  NetDef three = ParseNet(ReaderOp(db, 2));
  three.mutable_op(0)->add_output("extra");
  s = StatusFromCall([&] { ws.CreateNet(three); });
  EXPECT_NE(s.message().find("hold 2 tensors but the op has 3 outputs"), std::string::npos)
      << s.ToString();
  // mean and std normalise uint8 images only.
  const std::string floats = (dir_ / "floats").string();
  {
    std::unique_ptr<Db> f = OpenDb("lmdb", floats, DbMode::kNew);
    TensorProtos record;
    record.add_protos()->add_float_data(1.f);  // FLOAT scalar
    std::unique_ptr<DbTransaction> txn = f->NewTransaction();
    txn->Put("a", record.SerializeAsString());
    txn->Commit();
  }
  s = StatusFromCall([&] {
    ws.CreateNet(ParseNet("op { type: 'TensorProtosDBInput' output: 'x' arg { name: 'db' s: '" +
                          floats + "' } arg { name: 'batch_size' i: 2 } "
                          "arg { name: 'mean' f: 0.5 } }"));
  });
  EXPECT_NE(s.message().find("mean and std normalise uint8 images, but the records' first "
                             "tensor is float32[]"),
            std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace braid
