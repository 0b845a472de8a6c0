#include "runtime/exec/dag_net.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

#include "runtime/core/workspace.h"
#include "runtime/exec/chrome_trace.h"
#include "runtime/exec/intra_op_threads.h"
#include "runtime/exec/net_args.h"
#include "runtime/exec/op_type_profile.h"
#include "testing/net_text.h"
#include "testing/test_ops.h"

namespace braid {
namespace {

using ::braid::testing::FailArmed;
using ::braid::testing::NetFromText;
using ::braid::testing::TestSleepStats;
using ::braid::testing::ThrowingObserver;

// `width` independent TestSleep ops of `us` microseconds each.
NetDef WideSleepNet(int width, int us, const std::string& extra_args = "") {
  std::string text = "name: \"wide\" type: \"dag\" arg { name: \"num_workers\" i: 4 } " + extra_args;
  for (int i = 0; i < width; ++i) {
    text += "op { type: \"TestSleep\" output: \"s" + std::to_string(i) + "\" arg { name: \"us\" i: " +
            std::to_string(us) + " } }";
  }
  return NetFromText(text);
}

class RecordingObserver final : public NetObserver {
 public:
  void OnRunEnd(const Net&, const std::vector<OpEvent>& events) override { runs.push_back(events); }
  std::vector<std::vector<OpEvent>> runs;
};

bool AnyTwoOverlap(const std::vector<OpEvent>& events) {
  for (size_t i = 0; i < events.size(); ++i) {
    for (size_t j = i + 1; j < events.size(); ++j) {
      if (events[i].start_ns < events[j].end_ns && events[j].start_ns < events[i].end_ns) return true;
    }
  }
  return false;
}

TEST(DagNetTest, FirstIterationRunsOneOpAtATimeThenParallel) {
  Workspace ws;
  auto* net = static_cast<DagNet*>(
      ws.CreateNet(WideSleepNet(8, 20000, "arg { name: \"first_iter_only_one_worker\" i: 1 }")));
  ASSERT_TRUE(net->first_iter_only_one_worker());
  RecordingObserver observer;
  net->AddObserver(&observer);
  TestSleepStats().Reset();
  ASSERT_TRUE(net->Run().ok());
  EXPECT_EQ(TestSleepStats().max_running.load(), 1);
  EXPECT_FALSE(AnyTwoOverlap(observer.runs[0]));
  TestSleepStats().Reset();
  ASSERT_TRUE(net->Run().ok());
  EXPECT_GE(TestSleepStats().max_running.load(), 2);
  EXPECT_TRUE(AnyTwoOverlap(observer.runs[1]));
}

// num_workers above the core count is honoured (oneTBB capped the workers at the hardware
// threads): that many threads take the net's chains. (At most one op per core runs at a time:
// they hold core tokens, runtime/exec/intra_op_threads.h.)
TEST(DagNetTest, MoreWorkersThanCoresAllTakeChains) {
  const int workers = std::max(8, static_cast<int>(std::thread::hardware_concurrency()) * 2);
  NetDef def = WideSleepNet(workers * 4, 20000);
  def.mutable_arg(0)->set_i(workers);  // num_workers
  Workspace ws;
  Net* net = ws.CreateNet(def);
  RecordingObserver observer;
  net->AddObserver(&observer);
  ASSERT_TRUE(net->Run().ok());
  std::set<int> threads;
  for (const OpEvent& e : observer.runs[0]) threads.insert(e.thread);
  EXPECT_GT(static_cast<int>(threads.size()), static_cast<int>(std::thread::hardware_concurrency()));
}

TEST(DagNetTest, WithoutTheFlagTheFirstIterationIsParallel) {
  Workspace ws;
  auto* net = static_cast<DagNet*>(ws.CreateNet(WideSleepNet(8, 20000)));
  EXPECT_FALSE(net->first_iter_only_one_worker());
  TestSleepStats().Reset();
  ASSERT_TRUE(net->Run().ok());
  EXPECT_GE(TestSleepStats().max_running.load(), 2);
}

TEST(DagNetTest, SingleThreadedFirstRunDefaultsOnForCollectivesAndLazyAllocators) {
  Workspace ws;
  for (const char* type : {"TestCollective", "TestLazy"}) {
    NetDef def = NetFromText(std::string("name: \"c\" type: \"dag\" op { type: \"") + type + "\" }");
    EXPECT_TRUE(static_cast<DagNet*>(ws.CreateNet(def))->first_iter_only_one_worker()) << type;
    Argument* off = def.add_arg();
    off->set_name("first_iter_only_one_worker");
    off->set_i(0);
    EXPECT_FALSE(static_cast<DagNet*>(ws.CreateNet(def))->first_iter_only_one_worker()) << type;
  }
}

TEST(DagNetTest, StraightLineChainsBecomeOneNode) {
  Workspace ws;
  ws.CreateBlob("x");
  auto* chain = static_cast<DagNet*>(ws.CreateNet(NetFromText(R"(name: "chain" type: "dag"
    op { type: "NoOp" input: "x" output: "a" }
    op { type: "NoOp" input: "a" output: "b" }
    op { type: "NoOp" input: "b" output: "c" })")));
  EXPECT_EQ(chain->num_chains(), 1);
  auto* diamond = static_cast<DagNet*>(ws.CreateNet(NetFromText(R"(name: "diamond" type: "dag"
    op { type: "NoOp" input: "x" output: "a" }
    op { type: "NoOp" input: "a" output: "b" }
    op { type: "NoOp" input: "b" output: "b1" }
    op { type: "NoOp" input: "a" output: "c" }
    op { type: "NoOp" input: "b1" input: "c" output: "d" })")));
  EXPECT_EQ(diamond->num_chains(), 4);  // {a}, {b, b1}, {c}, {d}
}

// 40 layers of 8 sleeping ops, each layer after the previous; op 1 of layer 1 fails.
NetDef LayeredNetWithFailure() {
  std::string text = R"(name: "layers" type: "dag" arg { name: "num_workers" i: 2 } )";
  for (int layer = 0; layer < 40; ++layer) {
    for (int k = 0; k < 8; ++k) {
      std::string out = "l" + std::to_string(layer) + "_" + std::to_string(k);
      std::string in = layer == 0 ? "" : "input: \"l" + std::to_string(layer - 1) + "_" + std::to_string(k) + "\" ";
      std::string ctl = layer == 0 ? "" : "control_input: \"l" + std::to_string(layer - 1) + "_0\" ";
      bool fail = layer == 1 && k == 1;
      text += "op { type: \"" + std::string(fail ? "TestFail" : "TestSleep") + "\" name: \"" + out +
              "\" " + in + ctl + "output: \"" + out + "\" " +
              (fail ? "" : "arg { name: \"us\" i: 2000 } ") + "}";
    }
  }
  return NetFromText(text);
}

TEST(DagNetTest, FailingOpStopsTheRunWithItsErrorAndTheNextRunSucceeds) {
  Workspace ws;
  Net* net = ws.CreateNet(LayeredNetWithFailure());
  RecordingObserver observer;
  net->AddObserver(&observer);
  FailArmed() = true;
  Status s = net->Run();
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("net 'layers' op #9 (TestFail 'l1_1'): injected failure"),
            std::string::npos)
      << s.ToString();
  // After the failure, only ops already past their skip check may still start: one per worker.
  const std::vector<OpEvent>& events = observer.runs[0];
  int started_after_failure = 0, ran = 0;
  for (const OpEvent& e : events) {
    ran += e.ran();
    started_after_failure += e.ran() && e.start_ns > events[9].end_ns;
  }
  EXPECT_LE(started_after_failure, 2);
  EXPECT_LT(ran, 320);

  FailArmed() = false;
  EXPECT_TRUE(net->Run().ok());
  ran = 0;
  for (const OpEvent& e : observer.runs[1]) ran += e.ran();
  EXPECT_EQ(ran, 320);
  FailArmed() = true;
}

// A deadline in a parallel graph: four 60 ms branches are ready side by side, each op's team wants
// every core (so they take turns at the core tokens), the deadline passes 20 ms in, and no op
// starts after it: neither the branches still waiting for cores when it passes nor the four ops
// that follow them. The Run is DeadlineExceeded (not the Cancelled of an op refused its cores)
// naming an op it stopped before, and the next Run, without a deadline, runs every op. (The op
// running when it passes finishes: an op is never interrupted.)
TEST(DagNetTest, ADeadlineInAParallelGraphStartsNoFurtherOpAndTheNextRunRunsThemAll) {
  const int team = std::min(HardwareThreads(), kMaxNetThreads);
  std::string text =
      "name: \"branches\" type: \"dag\" arg { name: \"num_workers\" i: 4 } "
      "arg { name: \"intra_op_threads\" i: " +
      std::to_string(team) + " } ";
  for (int b = 0; b < 4; ++b) {
    const std::string i = std::to_string(b);
    text += "op { type: \"TestSleep\" output: \"a" + i + "\" arg { name: \"us\" i: 60000 } } ";
    text += "op { type: \"TestSleep\" input: \"a" + i + "\" output: \"b" + i +
            "\" arg { name: \"us\" i: 1000 } } ";
  }
  Workspace ws;
  Net* net = ws.CreateNet(NetFromText(text));
  RecordingObserver observer;
  net->AddObserver(&observer);
  ASSERT_TRUE(net->Run().ok());  // the first Run, which may run one op at a time
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  const Status s = net->Run(RunStop{deadline, {}});
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
  EXPECT_NE(s.message().find("TestSleep"), std::string::npos) << s.ToString();
  const int64_t deadline_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
  const std::vector<OpEvent>& stopped = observer.runs[1];
  const auto ran_in = [](const std::vector<OpEvent>& events) {
    int ran = 0;
    for (const OpEvent& e : events) ran += e.ran();
    return ran;
  };
  int started_late = 0, followers = 0;
  for (size_t i = 0; i < stopped.size(); ++i) {
    started_late += stopped[i].ran() && stopped[i].start_ns > deadline_ns;
    followers += i % 2 == 1 && stopped[i].ran();
  }
  EXPECT_EQ(started_late, 0);
  EXPECT_EQ(followers, 0);
  EXPECT_LT(ran_in(stopped), 4);  // the branches took turns: some never started
  ASSERT_TRUE(net->Run().ok());
  EXPECT_EQ(ran_in(observer.runs[2]), 8);
}

// A failed first Run may have left lazy allocations undone: its retry runs one op at a time too,
// and only a Run after a successful one runs ops side by side.
TEST(DagNetTest, AFailedFirstRunLeavesTheRetrySingleThreaded) {
  NetDef def = WideSleepNet(8, 20000);
  NetDef lazy_then_fail;
  lazy_then_fail.add_op()->set_type("TestLazy");  // first_iter_only_one_worker defaults to 1
  lazy_then_fail.add_op()->set_type("TestFail");
  for (const OperatorDef& op : def.op()) *lazy_then_fail.add_op() = op;
  def.clear_op();
  def.MergeFrom(lazy_then_fail);
  Workspace ws;
  auto* net = static_cast<DagNet*>(ws.CreateNet(def));
  ASSERT_TRUE(net->first_iter_only_one_worker());
  FailArmed() = true;
  EXPECT_FALSE(net->Run().ok());
  FailArmed() = false;
  TestSleepStats().Reset();
  ASSERT_TRUE(net->Run().ok());
  EXPECT_EQ(TestSleepStats().max_running.load(), 1);
  TestSleepStats().Reset();
  ASSERT_TRUE(net->Run().ok());
  EXPECT_GE(TestSleepStats().max_running.load(), 2);
  FailArmed() = true;
}

// What throws outside an op's Run (here an observer, as a launch or a stream's drain may) fails
// that Run with a Status and leaves the net runnable, on both executors.
TEST(DagNetTest, AnExceptionOutsideTheOpsFailsTheRunNotTheNet) {
  for (const char* type : {"dag", "simple"}) {
    for (const bool at_run_end : {false, true}) {
      NetDef def = LayeredNetWithFailure();
      def.set_type(type);
      FailArmed() = false;
      Workspace ws;
      Net* net = ws.CreateNet(def);
      ThrowingObserver observer(5, at_run_end);
      net->AddObserver(&observer);
      const Status failed = net->Run();
      EXPECT_FALSE(failed.ok()) << type;
      EXPECT_NE(failed.message().find(at_run_end ? "net 'layers': observer at the end"
                                                 : "net 'layers' op #5 "),
                std::string::npos)
          << failed.ToString();
      EXPECT_TRUE(net->Run().ok()) << type << " " << at_run_end;
      EXPECT_EQ(net->run_count(), 2);
    }
  }
  FailArmed() = true;
}

TEST(DagNetTest, UnobservedNetReportsTheFailingOpToo) {
  Workspace ws;
  Net* net = ws.CreateNet(LayeredNetWithFailure());
  FailArmed() = true;
  Status s = net->Run();
  EXPECT_NE(s.message().find("net 'layers' op #9 (TestFail 'l1_1'): injected failure"),
            std::string::npos)
      << s.ToString();
}

TEST(DagNetTest, SimpleNetStopsAtTheFailingOp) {
  Workspace ws;
  NetDef def = LayeredNetWithFailure();
  def.set_type("simple");
  FailArmed() = true;
  Status s = ws.CreateNet(def)->Run();
  EXPECT_NE(s.message().find("op #9 (TestFail 'l1_1')"), std::string::npos) << s.ToString();
}

TEST(DagNetTest, ConcurrentRunOfOneNetIsRefused) {
  for (const char* type : {"dag", "simple"}) {
    Workspace ws;
    NetDef def = WideSleepNet(1, 300000);
    def.set_type(type);
    Net* net = ws.CreateNet(def);
    TestSleepStats().Reset();
    Status first;
    std::thread runner([&] { first = net->Run(); });
    while (TestSleepStats().running.load() == 0) std::this_thread::yield();
    Status second = net->Run();
    runner.join();
    EXPECT_TRUE(first.ok()) << first.ToString();
    EXPECT_EQ(second.code(), StatusCode::kFailedPrecondition) << type;
    EXPECT_NE(second.message().find("already running"), std::string::npos);
    EXPECT_TRUE(net->Run().ok());
  }
}

TEST(DagNetTest, ChromeTraceHasOneCompleteEventPerOpRun) {
  Workspace ws;
  Net* net = ws.CreateNet(WideSleepNet(3, 100));
  ChromeTraceWriter trace;
  OpTypeProfile profile;
  net->AddObserver(&trace);
  net->AddObserver(&profile);
  ASSERT_TRUE(net->Run().ok());
  ASSERT_TRUE(net->Run().ok());
  std::string json = trace.Json();
  size_t events = 0;
  for (size_t pos = json.find("\"ph\":\"X\""); pos != std::string::npos;
       pos = json.find("\"ph\":\"X\"", pos + 1)) {
    ++events;
  }
  EXPECT_EQ(events, 6u);
  EXPECT_EQ(json.rfind("{\"traceEvents\":[", 0), 0u);
  EXPECT_NE(profile.Table().find("TestSleep"), std::string::npos);
}

}  // namespace
}  // namespace braid
