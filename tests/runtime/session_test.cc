// Session (include/braid/session.h, the embedding API): memory plans that meet larger inputs, and
// the header's thread-safety rules under concurrent RunNet, LoadNet, PlanMemory and SetDevice.
#include "braid/session.h"

#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace braid
