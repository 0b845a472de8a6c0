// Tests of the application's data sources (include/braid/data_source.h): registration and its
// errors, the DataSourceInput op (ops/data/data_source_input_op.h) serving batches in index order
// with shapes known before it runs, the shuffled and sharded stream every braid reader serves, a
// failing or throwing Read reported with the net, the op, the source and the example, ownership
// across UnregisterDataSource, and Reads serialised per source object across concurrent nets.
#include "braid/data_source.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "ops/data/batch_prefetcher.h"
#include "runtime/core/shape_inference.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/net.h"
#include "testing/net_text.h"

namespace braid {
namespace {

// Example i: "x" float32 [2] = {i, -i}, "id" int64 [] = i. Read fails at fail_at (a Status, or
// what `failure` says to throw) and, with check_overlap, notes when another Read of this object is
// running (a Read sleeps a little so that overlaps would be seen).
class Numbers final : public DataSource {
 public:
  explicit Numbers(int64_t count) : count_(count) {}

  int64_t size() const override { return count_; }
  std::vector<DataField> fields() const override {
    return {{"x", DType::kFloat32, {2}}, {"id", DType::kInt64, {}}};
  }
  Status Read(int64_t index, const std::vector<void*>& slots) override {
    if (index == fail_at) {
      if (failure == Failure::kStdException) throw std::runtime_error("disk on fire");
      if (failure == Failure::kBraidError) throw Error(Status::NotFound("no such record"));
      if (failure == Failure::kAnything) throw 7;
      return Status::IoError("record " + std::to_string(index) + " is unreadable");
    }
    if (check_overlap && inside_.exchange(true)) overlapped_ = true;
    if (check_overlap) std::this_thread::sleep_for(std::chrono::microseconds(50));
    float* x = static_cast<float*>(slots[0]);
    x[0] = static_cast<float>(index);
    x[1] = -static_cast<float>(index);
    *static_cast<int64_t*>(slots[1]) = index;
    ++reads;
    if (check_overlap) inside_ = false;
    return Status::OK();
  }

  enum class Failure { kStatus, kStdException, kBraidError, kAnything };
  int64_t fail_at = -1;
  Failure failure = Failure::kStatus;
  bool check_overlap = false;
  std::atomic<int64_t> reads{0};
  bool overlapped() const { return overlapped_; }

 private:
  int64_t count_;
  std::atomic<bool> inside_{false};
  std::atomic<bool> overlapped_{false};
};

// A source whose size() and fields() are whatever the test says (size -1: size() throws a
// std::exception, -2: something else).
class Shaped final : public DataSource {
 public:
  Shaped(int64_t size, std::vector<DataField> fields) : size_(size), fields_(std::move(fields)) {}
  int64_t size() const override {
    if (size_ == -1) throw std::length_error("unknown length");
    if (size_ == -2) throw "unknown";
    return size_;
  }
  std::vector<DataField> fields() const override { return fields_; }
  Status Read(int64_t, const std::vector<void*>&) override { return Status::OK(); }

 private:
  int64_t size_;
  std::vector<DataField> fields_;
};

// Registers a source for one test and unregisters it at the end.
class Registration {
 public:
  Registration(const std::string& name, std::shared_ptr<DataSource> source) : name_(name) {
    const Status s = RegisterDataSource(name, std::move(source));
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  ~Registration() { (void)UnregisterDataSource(name_); }

 private:
  std::string name_;
};

NetDef ReaderNet(const std::string& source, int64_t batch_size, const std::string& extra = "") {
  return testing::NetFromText(
      "name: 'reader_net' op { type: 'DataSourceInput' name: 'in' output: 'x' output: 'id' "
      "arg { name: 'source' s: '" +
      source + "' } arg { name: 'batch_size' i: " + std::to_string(batch_size) + " } " + extra +
      " }");
}

// Runs each net 20 times, the two from two threads at once.
void RunTogether(Net* a, Net* b) {
  auto run = [](Net* net) {
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(net->Run().ok());
  };
  std::thread ta(run, a), tb(run, b);
  ta.join();
  tb.join();
}

std::vector<int64_t> Ids(const Workspace& ws) {
  const Tensor& id = *ws.GetBlob("id");
  return std::vector<int64_t>(id.data<int64_t>(), id.data<int64_t>() + id.numel());
}

TEST(DataSourceTest, RegistrationRefusesBadSourcesAndNamesWithAStatus) {
  auto good = std::make_shared<Numbers>(3);
  EXPECT_EQ(RegisterDataSource("", good).code(), StatusCode::kInvalidArgument);
  EXPECT_NE(RegisterDataSource("null", nullptr).message().find("data source 'null' is null"),
            std::string::npos);
  const Status empty = RegisterDataSource("empty", std::make_shared<Numbers>(0));
  EXPECT_NE(empty.message().find("'empty' holds 0 examples"), std::string::npos)
      << empty.ToString();
  EXPECT_NE(RegisterDataSource("fieldless", std::make_shared<Shaped>(1, std::vector<DataField>{}))
                .message()
                .find("has no fields"),
            std::string::npos);
  EXPECT_NE(RegisterDataSource("unnamed", std::make_shared<Shaped>(
                                              1, std::vector<DataField>{{"", DType::kInt32, {}}}))
                .message()
                .find("field 0 has no name"),
            std::string::npos);
  EXPECT_NE(
      RegisterDataSource("negative", std::make_shared<Shaped>(
                                         1, std::vector<DataField>{{"v", DType::kInt32, {-1}}}))
          .message()
          .find("field 0 ('v') has a negative dim"),
      std::string::npos);
  const auto shaped = [](int64_t size, std::vector<DataField> fields) {
    return std::make_shared<Shaped>(size, std::move(fields));
  };
  const std::vector<DataField> one = {{"v", DType::kInt32, {}}};
  std::vector<std::pair<Status, std::string>> refusals = {
      {RegisterDataSource("typeless", shaped(1, {{"v", static_cast<DType>(99), {}}})),
       "field 0 ('v') has no dtype braid knows (99)"},
      {RegisterDataSource(
           "huge", shaped(1, {{"v", DType::kFloat32, {int64_t{1} << 40, int64_t{1} << 40}}})),
       "field 0 ('v'): "},
      {RegisterDataSource("wide", shaped(1, std::vector<DataField>(65, one[0]))),
       "has 65 fields; at most 64"},
      {RegisterDataSource("throws", shaped(-1, one)),
       "'throws': size() or fields() threw: unknown length"},
      {RegisterDataSource("throws_else", shaped(-2, one)), "size() or fields() threw"}};
  for (const auto& [status, text] : refusals) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
    EXPECT_NE(status.message().find(text), std::string::npos)
        << text << " in " << status.ToString();
  }
  for (const char* name : {"typeless", "huge", "wide", "throws", "throws_else", "null"}) {
    EXPECT_EQ(UnregisterDataSource(name).code(), StatusCode::kNotFound) << name;
  }
  ASSERT_TRUE(RegisterDataSource("numbers", good).ok());
  const Status twice = RegisterDataSource("numbers", good);
  EXPECT_EQ(twice.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(twice.message().find("'numbers' is already registered"), std::string::npos);
  EXPECT_TRUE(UnregisterDataSource("numbers").ok());
  EXPECT_EQ(UnregisterDataSource("numbers").code(), StatusCode::kNotFound);
  // Nothing that was refused got registered.
  EXPECT_EQ(UnregisterDataSource("empty").code(), StatusCode::kNotFound);
}

TEST(DataSourceTest, ServesBatchesInIndexOrderWithShapesKnownBeforeItRuns) {
  Registration r("numbers5", std::make_shared<Numbers>(5));
  const NetDef def = ReaderNet("numbers5", 3);
  const auto shapes = InferBlobShapes(def, {});
  EXPECT_EQ(shapes.at("x").dims, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(shapes.at("x").dtype, DType::kFloat32);
  EXPECT_EQ(shapes.at("id").dims, (std::vector<int64_t>{3}));
  EXPECT_EQ(shapes.at("id").dtype, DType::kInt64);
  Workspace ws;
  Net* net = ws.CreateNet(def);
  ASSERT_TRUE(net->Run().ok());
  EXPECT_EQ(Ids(ws), (std::vector<int64_t>{0, 1, 2}));
  const float* x = ws.GetBlob("x")->data<float>();
  EXPECT_EQ(std::vector<float>(x, x + 6), (std::vector<float>{0, 0, 1, -1, 2, -2}));
  ASSERT_TRUE(net->Run().ok());  // the stream runs on into the next epoch: batches stay full
  EXPECT_EQ(Ids(ws), (std::vector<int64_t>{3, 4, 0}));
}

// The stream of every braid reader: each epoch a permutation from (seed, epoch); num_shards
// readers each serve their slice of every global batch, together what one reader serves.
TEST(DataSourceTest, ShuffledAndShardedStreamsAreTheReadersStream) {
  Registration r("numbers7", std::make_shared<Numbers>(7));
  const std::string shuffled = "arg { name: 'shuffle' i: 1 } arg { name: 'seed' i: 9 } ";
  Workspace whole_ws, shard0_ws, shard1_ws;
  Net* whole = whole_ws.CreateNet(ReaderNet("numbers7", 4, shuffled));
  Net* shard0 = shard0_ws.CreateNet(ReaderNet(
      "numbers7", 2, shuffled + "arg { name: 'num_shards' i: 2 } arg { name: 'shard_id' i: 0 }"));
  Net* shard1 = shard1_ws.CreateNet(ReaderNet(
      "numbers7", 2, shuffled + "arg { name: 'num_shards' i: 2 } arg { name: 'shard_id' i: 1 }"));
  ExampleOrder order(7, /*shuffle=*/true, /*seed=*/9);
  for (int step = 0; step < 5; ++step) {  // 20 examples: almost three epochs
    ASSERT_TRUE(whole->Run().ok());
    ASSERT_TRUE(shard0->Run().ok());
    ASSERT_TRUE(shard1->Run().ok());
    std::vector<int64_t> expected;
    for (int i = 0; i < 4; ++i) expected.push_back(order.Next());
    EXPECT_EQ(Ids(whole_ws), expected) << "step " << step;
    std::vector<int64_t> sharded = Ids(shard0_ws);
    const std::vector<int64_t> second = Ids(shard1_ws);
    sharded.insert(sharded.end(), second.begin(), second.end());
    EXPECT_EQ(sharded, expected) << "step " << step;
  }
}

TEST(DataSourceTest, AFailingReadFailsTheRunNamingNetOpSourceAndExample) {
  auto source = std::make_shared<Numbers>(6);
  source->fail_at = 4;
  Registration r("flaky", source);
  Workspace ws;
  Net* net = ws.CreateNet(ReaderNet("flaky", 2));
  ASSERT_TRUE(net->Run().ok());
  ASSERT_TRUE(net->Run().ok());
  const Status s = net->Run();
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
  for (const char* part : {"net 'reader_net'", "DataSourceInput", "'in'",
                           "data source 'flaky' example 4: record 4 is unreadable"}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " in " << s.ToString();
  }

  // What Read throws is reported as a Status returned would be.
  const std::vector<std::tuple<Numbers::Failure, StatusCode, std::string>> thrown_cases = {
      {Numbers::Failure::kStdException, StatusCode::kInternal,
       "example 0: Read threw: disk on fire"},
      {Numbers::Failure::kBraidError, StatusCode::kNotFound, "example 0: no such record"},
      {Numbers::Failure::kAnything, StatusCode::kInternal,
       "example 0: Read threw an exception that is no std::exception"}};
  for (const auto& [failure, code, text] : thrown_cases) {
    auto throwing = std::make_shared<Numbers>(6);
    throwing->fail_at = 0;
    throwing->failure = failure;
    Registration t("throwing", throwing);
    Workspace ws2;
    const Status thrown = ws2.CreateNet(ReaderNet("throwing", 2))->Run();
    EXPECT_EQ(thrown.code(), code) << thrown.ToString();
    EXPECT_NE(thrown.message().find("data source 'throwing' " + text), std::string::npos)
        << thrown.ToString();
  }
}

TEST(DataSourceTest, NetsNamingAnUnknownSourceOrTooFewOutputsFailToBuild) {
  Workspace ws;
  Status s = ws.RunNetOnce(ReaderNet("nobody", 2));
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find("data source 'nobody' is not registered"), std::string::npos)
      << s.ToString();
  Registration r("numbers3", std::make_shared<Numbers>(3));
  s = ws.RunNetOnce(testing::NetFromText(
      "name: 'one_output' op { type: 'DataSourceInput' output: 'x' "
      "arg { name: 'source' s: 'numbers3' } arg { name: 'batch_size' i: 1 } }"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("data source 'numbers3' has 2 fields but the op has 1 outputs"),
            std::string::npos)
      << s.ToString();
  s = ws.RunNetOnce(ReaderNet("numbers3", 0));
  EXPECT_NE(s.message().find("batch_size must be positive"), std::string::npos) << s.ToString();
}

TEST(DataSourceTest, AnOpKeepsItsSourceAfterUnregisteringAndReleasesItWhenDestroyed) {
  auto source = std::make_shared<Numbers>(4);
  std::weak_ptr<Numbers> watch = source;
  ASSERT_TRUE(RegisterDataSource("fleeting", std::move(source)).ok());
  auto ws = std::make_unique<Workspace>();
  Net* net = ws->CreateNet(ReaderNet("fleeting", 2));
  ASSERT_TRUE(UnregisterDataSource("fleeting").ok());
  EXPECT_FALSE(watch.expired());
  ASSERT_TRUE(net->Run().ok());
  EXPECT_EQ(Ids(*ws), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ws->RunNetOnce(ReaderNet("fleeting", 2)).code(), StatusCode::kNotFound);
  ws.reset();  // the op and its reader thread go
  EXPECT_TRUE(watch.expired());
}

// One object under two names, read by two nets run from two threads (each op with its own
// reader thread): braid never runs two of its Reads at once.
TEST(DataSourceTest, ReadsOfOneObjectNeverOverlapAcrossNamesAndNets) {
  auto source = std::make_shared<Numbers>(50);
  source->check_overlap = true;
  Registration a("shared_a", source), b("shared_b", source);
  Workspace ws_a, ws_b;
  Net* net_a = ws_a.CreateNet(ReaderNet("shared_a", 5, "arg { name: 'prefetch' i: 8 }"));
  Net* net_b = ws_b.CreateNet(ReaderNet("shared_b", 5, "arg { name: 'prefetch' i: 8 }"));
  RunTogether(net_a, net_b);
  EXPECT_FALSE(source->overlapped());
  EXPECT_GE(source->reads.load(), 200);  // 2 x 20 batches of 5, and what was read ahead
}

// An op keeps reading an object whose name was unregistered; registering the object again (under
// the same name) must give the new readers the same serialisation, not a lock of their own.
TEST(DataSourceTest, AnObjectRegisteredAgainWhileAnOpReadsItKeepsOneReadAtATime) {
  auto source = std::make_shared<Numbers>(50);
  source->check_overlap = true;
  ASSERT_TRUE(RegisterDataSource("again", source).ok());
  Workspace ws_a, ws_b;
  Net* net_a = ws_a.CreateNet(ReaderNet("again", 5, "arg { name: 'prefetch' i: 8 }"));
  ASSERT_TRUE(UnregisterDataSource("again").ok());
  ASSERT_TRUE(RegisterDataSource("again", source).ok());
  Net* net_b = ws_b.CreateNet(ReaderNet("again", 5, "arg { name: 'prefetch' i: 8 }"));
  RunTogether(net_a, net_b);
  EXPECT_FALSE(source->overlapped());
  ASSERT_TRUE(UnregisterDataSource("again").ok());
}

}  // namespace
}  // namespace braid
