// Session (include/braid/session.h, the embedding API): memory plans that meet larger inputs, the
// header's thread-safety rules under concurrent RunNet, LoadNet, PlanMemory and SetDevice, blobs of
// every dtype in and out, and runs that end at a deadline or a cancellation.
#include "braid/session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace braid {
namespace {

// y = Relu(Relu(x) * x): the product is planned (used only inside a run).
constexpr char kNet[] = R"(
name: "twice"
type: "dag"
arg { name: "num_workers" i: 2 }
external_input: "x"
op { type: "Relu" input: "x" output: "r" }
op { type: "Mul" input: "r" input: "x" output: "p" }
op { type: "Relu" input: "p" output: "y" }
external_output: "y"
)";

std::string WriteNet(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/session_test_" + name + ".pbtxt";
  std::ofstream(path) << text;
  return path;
}

std::vector<float> Fetched(Session& session, const std::string& blob) {
  std::vector<int64_t> shape;
  std::vector<float> values;
  const Status s = session.Fetch(blob, &shape, &values);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return values;
}

TEST(SessionTest, APlannedNetFedALargerInputSaysToPlanAgainAndRunsOnceReplanned) {
  Session session;
  std::string name;
  ASSERT_TRUE(session.LoadNet(WriteNet("plan", kNet), &name).ok());
  ASSERT_TRUE(session.Feed("x", {4}, {1, -2, 3, -4}).ok());
  ASSERT_TRUE(session.PlanMemory(name).ok());
  ASSERT_TRUE(session.RunNet(name).ok());
  EXPECT_EQ(Fetched(session, "y"), (std::vector<float>{1, 0, 9, 0}));

  ASSERT_TRUE(session.Feed("x", {1000}, std::vector<float>(1000, 2.f)).ok());
  const Status s = session.RunNet(name);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("plan the net's memory again"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("net 'twice'"), std::string::npos) << s.ToString();

  ASSERT_TRUE(session.PlanMemory(name).ok());
  const Status again = session.RunNet(name);
  ASSERT_TRUE(again.ok()) << again.ToString();
  EXPECT_EQ(Fetched(session, "y"), std::vector<float>(1000, 4.f));
}

// Runs overlap LoadNets replacing the net, PlanMemory re-binding its blobs, SetDevice and Feed (before,
// LoadNet destroyed a running net and PlanMemory re-bound tensors a Run was using). Run it under
// TSan and ASan: a race or a use after free is the failure.
TEST(SessionTest, RunLoadPlanAndSetDeviceFromManyThreadsAtOnce) {
  Session session;
  const std::string path = WriteNet("concurrent", kNet);
  std::string name;
  ASSERT_TRUE(session.LoadNet(path, &name).ok());
  ASSERT_TRUE(session.Feed("x", {64}, std::vector<float>(64, 3.f)).ok());
  std::atomic<int> runs{0}, refused{0};
  std::atomic<bool> failed{false};
  auto expect_ok = [&](const Status& s, const char* what) {
    if (!s.ok()) {
      ADD_FAILURE() << what << ": " << s.ToString();
      failed = true;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 300 && !failed; ++i) {
        const Status s = session.RunNet(name, 2);
        if (s.code() == StatusCode::kFailedPrecondition) {
          ++refused;  // the other thread's Run of the same net
        } else {
          expect_ok(s, "RunNet");
          ++runs;
        }
      }
    });
  }
  for (int t = 0; t < 2; ++t) {  // two at once: each replaces the net the other may have loaded
    threads.emplace_back([&] {
      for (int i = 0; i < 100 && !failed; ++i) {
        std::string loaded;
        expect_ok(session.LoadNet(path, &loaded), "LoadNet");
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 100 && !failed; ++i) expect_ok(session.PlanMemory(name), "PlanMemory");
  });
  threads.emplace_back([&] {
    for (int i = 0; i < 100 && !failed; ++i) {
      expect_ok(session.SetDevice("cpu:0"), "SetDevice");  // LoadNet and Feed read the device
      expect_ok(session.Feed("unused", {2}, {1, 2}), "Feed");  // a blob no net uses
      EXPECT_FALSE(session.BlobNames().empty());
    }
  });
  for (std::thread& t : threads) t.join();
  EXPECT_GT(runs.load(), 0);
  ASSERT_TRUE(session.SetDevice("cpu:0").ok());
  ASSERT_TRUE(session.RunNet(name).ok());
  EXPECT_EQ(Fetched(session, "y"), std::vector<float>(64, 9.f));
}

// Every dtype a view can hold goes in and comes back with its bits, on the host and on a sim
// device; a net computes on typed blobs; the float Fetch refuses another dtype by name.
TEST(SessionTest, BlobsOfEveryDtypeGoInAndComeBackWithTheirBits) {
  for (const std::string device : {"", "sim:0"}) {
    Session session;
    if (!device.empty()) {
      ASSERT_TRUE(session.SetDevice(device).ok());
    }
    const std::vector<int64_t> ids = {int64_t{1} << 40, -3};
    const std::vector<int32_t> counts = {7, -8, 9};
    const std::vector<uint8_t> pixels = {0, 128, 255};
    const std::vector<double> precise = {0.1, -1e300};
    const bool flags[] = {true, false};
    const std::vector<std::pair<std::string, InputView>> inputs = {
        {"ids", InputView::Of(ids.data(), {2})},
        {"counts", InputView::Of(counts.data(), {3, 1})},
        {"pixels", InputView::Of(pixels.data(), {1, 3})},
        {"precise", InputView::Of(precise.data(), {2})},
        {"flags", InputView::Of(flags, {2})}};
    for (const auto& [name, view] : inputs) {
      ASSERT_TRUE(session.Feed(name, view).ok()) << name << " on " << device;
      OutputTensor out;
      const Status fetched = session.Fetch(name, &out);
      ASSERT_TRUE(fetched.ok()) << fetched.ToString();
      EXPECT_EQ(out.dtype, view.dtype) << name;
      EXPECT_EQ(out.shape, view.shape) << name;
      ASSERT_EQ(out.bytes.size(), out.numel() * DTypeSize(view.dtype)) << name;
      EXPECT_EQ(std::memcmp(out.bytes.data(), view.data, out.bytes.size()), 0) << name;
    }
    std::string net_name;
    ASSERT_TRUE(session
                    .LoadNet(WriteNet("typed", R"(name: "typed"
                       op { type: "Cast" input: "pixels" output: "f" arg { name: "to" i: 1 } }
                       external_input: "pixels" external_output: "f")"),
                             &net_name)
                    .ok());
    ASSERT_TRUE(session.RunNet(net_name).ok());
    EXPECT_EQ(Fetched(session, "f"), (std::vector<float>{0, 128, 255}));
    std::vector<int64_t> shape;
    std::vector<float> values;
    const Status refused = session.Fetch("ids", &shape, &values);
    EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(refused.message().find("blob 'ids' is int64, not float32"), std::string::npos)
        << refused.message();
  }
}

TEST(SessionTest, ABadViewIsAnErrorNamingTheBlob) {
  Session session;
  const float one = 1.f;
  Status s = session.Feed("x", InputView::Of(&one, {2, -1}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("feeding blob 'x'"), std::string::npos) << s.message();
  s = session.Feed("x", InputView::Of<int32_t>(nullptr, {4}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("feeding blob 'x' has no data"), std::string::npos) << s.message();
  EXPECT_TRUE(session.Feed("empty", InputView::Of<int32_t>(nullptr, {0, 3})).ok());
  ASSERT_TRUE(session.Feed("none", InputView::Of<float>(nullptr, {0, 10})).ok());
  std::vector<int64_t> shape;
  std::vector<float> values = {1.f};
  s = session.Fetch("none", &shape, &values);  // an empty float32 blob is float32 all the same
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(shape, (std::vector<int64_t>{0, 10}));
  EXPECT_TRUE(values.empty());
  s = session.Feed("x", {2}, {1.f, 2.f, 3.f});
  EXPECT_NE(s.message().find("shape [2] needs 2 values, got 3"), std::string::npos) << s.message();
}

// RunNet with RunOptions: a deadline already past stops the run before its first op, a stopped
// token cancels it, both naming the op; later runs without them run every op.
TEST(SessionTest, ARunEndsAtItsDeadlineOrItsCancellationNamingTheOp) {
  Session session;
  std::string net_name;
  ASSERT_TRUE(session.LoadNet(WriteNet("stoppable", kNet), &net_name).ok());
  ASSERT_TRUE(session.Feed("x", {2}, {1.f, -2.f}).ok());
  RunOptions late;
  late.deadline = std::chrono::steady_clock::now() - std::chrono::milliseconds(1);
  Status s = session.RunNet(net_name, 3, late);
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
  EXPECT_NE(s.message().find("Relu"), std::string::npos) << s.message();
  std::stop_source cancel;
  cancel.request_stop();
  RunOptions cancelled;
  cancelled.stop = cancel.get_token();
  s = session.RunNet(net_name, 1, cancelled);
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
  RunOptions generous;
  generous.deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  ASSERT_TRUE(session.RunNet(net_name, 2, generous).ok());
  EXPECT_EQ(Fetched(session, "y"), (std::vector<float>{1.f, 0.f}));
}

}  // namespace
}  // namespace braid
