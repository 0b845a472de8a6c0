// The executors on simulated GPUs (runtime/exec/launch_plan.h): asynchronous launch, event edges,
// host waits, kernel errors, the watchdog, device checks when a net is built and when it runs.
#include <chrono>
#include <cstring>
#include <set>

#include <gtest/gtest.h>

#include "runtime/core/workspace.h"
#include "runtime/device/sim/sim_device.h"
#include "runtime/exec/chrome_trace.h"
#include "runtime/exec/launch_plan.h"
#include "runtime/exec/net.h"
#include "testing/net_text.h"
#include "testing/sanitizers.h"
#include "testing/test_ops.h"

namespace braid {
namespace {

using namespace std::chrono_literals;
using ::braid::testing::DeviceBlockGate;
using ::braid::testing::FailArmed;
using ::braid::testing::NetFromText;

std::string On(int sim) {
  return " device_option { device_type: 1000 device_id: " + std::to_string(sim) + " } ";
}

std::string Fill(const std::string& out, float value, int sim) {
  return "op { type: \"ConstantFill\" output: \"" + out +
         "\" arg { name: \"shape\" ints: 4 } arg { name: \"value\" f: " + std::to_string(value) +
         " } " + On(sim) + "}";
}

std::vector<float> HostValues(const Workspace& ws, const std::string& blob) {
  Tensor host;
  host.CopyFrom(*ws.GetBlob(blob));
  const float* p = host.data<float>();
  return std::vector<float>(p, p + host.numel());
}

class RecordingObserver final : public NetObserver {
 public:
  void OnRunEnd(const Net&, const std::vector<OpEvent>& events) override { runs.push_back(events); }
  std::vector<std::vector<OpEvent>> runs;
};

class DeviceExecutorTest : public ::testing::Test {
 protected:
  void TearDown() override {
    SetSimDeviceOptions(SimDeviceOptions());
    DeviceBlockGate().Open();
    FailArmed() = true;
    LaunchPlan::DropWaitForTesting(-1, -1);
  }
};

// An exception no op catches, thrown where a sim op runs (on its stream's thread), fails that Run
// and leaves the net runnable (it ended the process before).
TEST_F(DeviceExecutorTest, AnObserverThrowingOnAStreamFailsTheRunNotTheProcess) {
  for (const char* type : {"simple", "dag"}) {
    Workspace ws;
    Net* net = ws.CreateNet(NetFromText("name: \"n\" type: \"" + std::string(type) + "\" " +
                                        Fill("a", 1, 0) + Fill("b", 2, 0)));
    ::braid::testing::ThrowingObserver observer(1, /*at_run_end=*/false);
    net->AddObserver(&observer);
    const Status failed = net->Run();
    EXPECT_NE(failed.message().find("net 'n' op #1 (ConstantFill ''): observer"), std::string::npos)
        << failed.ToString();
    ASSERT_TRUE(net->Run().ok()) << type;
    EXPECT_EQ(HostValues(ws, "b"), std::vector<float>(4, 2.f));
  }
}

// More workers than a device has streams: chains share the device's 64 streams (asking for stream
// 64 aborted the process before).
TEST_F(DeviceExecutorTest, MoreWorkersThanStreamsShareTheDevicesStreams) {
  std::string text = R"(name: "wide" type: "dag" arg { name: "num_workers" i: 128 })";
  for (int i = 0; i < 70; ++i) text += Fill("f" + std::to_string(i), static_cast<float>(i), 0);
  Workspace ws;
  Net* net = ws.CreateNet(NetFromText(text));
  ASSERT_TRUE(net->Run().ok());
  EXPECT_EQ(HostValues(ws, "f69"), std::vector<float>(4, 69.f));
  EXPECT_EQ(HostValues(ws, "f0"), std::vector<float>(4, 0.f));
}

TEST_F(DeviceExecutorTest, ANetOnASimDeviceComputesWhatItComputesOnTheHost) {
  const std::string body = R"(
    op { type: "GaussianFill" output: "w" arg { name: "shape" ints: 3 ints: 5 } arg { name: "seed" i: 3 } DEV }
    op { type: "GaussianFill" output: "x" arg { name: "shape" ints: 2 ints: 5 } arg { name: "seed" i: 4 } DEV }
    op { type: "GaussianFill" output: "b" arg { name: "shape" ints: 3 } arg { name: "seed" i: 5 } DEV }
    op { type: "FC" input: "x" input: "w" input: "b" output: "y" DEV }
    op { type: "Relu" input: "y" output: "y" DEV }
    op { type: "Softmax" input: "y" output: "p" DEV })";
  auto with = [&](const std::string& device) {
    std::string text = body;
    for (size_t pos; (pos = text.find("DEV")) != std::string::npos;) text.replace(pos, 3, device);
    return text;
  };
  for (const char* type : {"simple", "dag"}) {
    Workspace host_ws, sim_ws;
    NetDef host = NetFromText(std::string("name: \"h\" type: \"") + type + "\"" + with(""));
    NetDef sim = NetFromText(std::string("name: \"s\" type: \"") + type + "\"" + with(On(0)) +
                             "op { type: \"CopyGPUToCPU\" input: \"p\" output: \"p_host\"" +
                             On(0) + "}");
    ASSERT_TRUE(host_ws.CreateNet(host)->Run().ok());
    Status s = sim_ws.CreateNet(sim)->Run();
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(sim_ws.GetBlob("p")->device(), (Device{DeviceType::kSim, 0}));
    EXPECT_TRUE(sim_ws.GetBlob("p_host")->device().is_host());
    EXPECT_EQ(HostValues(sim_ws, "p_host"), HostValues(host_ws, "p")) << type;
  }
}

TEST_F(DeviceExecutorTest, TheHostLaunchesEveryKernelBeforeTheFirstOneEnds) {
  std::string text = R"(name: "async" type: "simple")";
  for (int i = 0; i < 4; ++i) {
    text += "op { type: \"TestSleep\" arg { name: \"us\" i: 30000 } " + On(0) + "}";
  }
  Workspace ws;
  Net* net = ws.CreateNet(NetFromText(text));
  RecordingObserver observer;
  net->AddObserver(&observer);
  ASSERT_TRUE(net->Run().ok());
  const std::vector<OpEvent>& e = observer.runs[0];
  for (const OpEvent& op : e) {
    EXPECT_TRUE(op.ran() && op.launched());
    EXPECT_EQ(op.stream, 0);
    EXPECT_NE(op.thread, op.launch_thread);
  }
  EXPECT_LT(e[3].launch_end_ns, e[0].end_ns) << "Launch waited for a kernel";
  for (int i = 1; i < 4; ++i) EXPECT_GE(e[i].start_ns, e[i - 1].end_ns) << "stream order";
}

// sim:0 produces x slowly; sim:1 copies it (a device-side wait on sim:0's event); the host reads
// the copy after CopyGPUToCPU (a host-side wait): r is 7 everywhere. PipelineNet's op 2 (the Copy
// on sim:1) waits for op 1 (the slow producer on sim:0). One thread per op: no op holds every core
// (runtime/exec/intra_op_threads.h), so without the wait nothing else orders the two.
NetDef PipelineNet() {
  return NetFromText("name: \"pipe\" type: \"dag\" arg { name: \"num_workers\" i: 2 } "
                     "arg { name: \"intra_op_threads\" i: 1 } " +
                     Fill("a", 7, 0) +
                     "op { type: \"TestDelayedCopy\" input: \"a\" output: \"x\" "
                     "arg { name: \"us\" i: 50000 } " + On(0) + "}"
                     "op { type: \"Copy\" input: \"x\" output: \"y\" " + On(1) + "}"
                     "op { type: \"CopyGPUToCPU\" input: \"y\" output: \"z\" " + On(1) + "}"
                     "op { type: \"Relu\" input: \"z\" output: \"r\" }");
}

TEST_F(DeviceExecutorTest, ConsumersWaitForProducersOnOtherDevicesAndOnTheHost) {
  Workspace ws;
  Net* net = ws.CreateNet(PipelineNet());
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE(net->Run().ok());
    EXPECT_EQ(HostValues(ws, "r"), std::vector<float>(4, 7.f));
  }
}

// The classic transfer between devices without peer access: CopyGPUToCPU on sim:0 writes a host
// blob h, CopyCPUToGPU on sim:1 reads it. The executor gives the second copy only a wait on its
// stream, so the host blob is read when sim:1's stream gets there, after sim:0's slow producer and
// its copy to the host; CUDA's copies read and write the host in stream order too
// (runtime/device/cuda/pinned_host_pool.h), and ops_cuda.CudaTensor.* runs this chain there. Each
// run feeds other values, so a read at launch would see the last run's.
TEST_F(DeviceExecutorTest, ADeviceCopyReadsAHostBlobAfterTheDeviceCopyThatWritesIt) {
  const NetDef def = NetFromText(
      "name: \"transfer\" type: \"simple\" "
      "op { type: \"CopyCPUToGPU\" input: \"in\" output: \"a\" " + On(0) + "}"
      "op { type: \"TestDelayedCopy\" input: \"a\" output: \"x\" arg { name: \"us\" i: 50000 } " +
      On(0) + "}"
      "op { type: \"CopyGPUToCPU\" input: \"x\" output: \"h\" " + On(0) + "}"
      "op { type: \"CopyCPUToGPU\" input: \"h\" output: \"y\" " + On(1) + "}"
      "op { type: \"CopyGPUToCPU\" input: \"y\" output: \"z\" " + On(1) + "}");
  Workspace ws;
  Net* net = nullptr;
  for (int run = 0; run < 3; ++run) {
    const std::vector<float> values(4, 1.5f + static_cast<float>(run));
    Tensor* in = ws.CreateBlob("in");
    in->Resize(DType::kFloat32, {4});
    std::copy(values.begin(), values.end(), in->mutable_data<float>());
    if (net == nullptr) net = ws.CreateNet(def);
    const Status s = net->Run();
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(ws.GetBlob("y")->device(), (Device{DeviceType::kSim, 1}));
    EXPECT_EQ(HostValues(ws, "z"), values) << "run " << run;
  }
}

// Mutation check: without op 2's wait for op 1, sim:1 copies x before it is written.
TEST_F(DeviceExecutorTest, AMissingWaitShowsAsWrongResults) {
  if (testing::kThreadSanitizer) {
    GTEST_SKIP() << "races on purpose: ThreadSanitizer reports the dropped wait as a data race";
  }
  LaunchPlan::DropWaitForTesting(2, 1);
  Workspace ws;
  ASSERT_TRUE(ws.CreateNet(PipelineNet())->Run().ok());
  EXPECT_NE(HostValues(ws, "r"), std::vector<float>(4, 7.f)) << "dropping the wait went unnoticed";
}

TEST_F(DeviceExecutorTest, AFailingKernelStopsItsStreamAndTheNextRunSucceeds) {
  const std::string text = R"(name: "fails" type: "simple")" + Fill("a", 1, 0) +
                           "op { type: \"TestFail\" name: \"boom\" input: \"a\" " + On(0) + "}" +
                           "op { type: \"Relu\" input: \"a\" output: \"b\" " + On(0) + "}";
  Workspace ws;
  Net* net = ws.CreateNet(NetFromText(text));
  RecordingObserver observer;
  net->AddObserver(&observer);
  FailArmed() = true;
  Status s = net->Run();
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("net 'fails' op #1 (TestFail 'boom'): injected failure"),
            std::string::npos)
      << s.ToString();
  EXPECT_FALSE(observer.runs[0][2].ran()) << "a kernel after the failure ran";
  FailArmed() = false;
  EXPECT_TRUE(net->Run().ok());
  EXPECT_TRUE(observer.runs[1][2].ran());
}

TEST_F(DeviceExecutorTest, TheWatchdogEndsAHungRunWithAnErrorAndTheNetRunsAgain) {
  SimDeviceOptions options;
  options.watchdog = 1000ms;  // 200 ms failed once under TSan at load 9 (not reproduced)
  SetSimDeviceOptions(options);
  const std::string text = R"(name: "hang" type: "dag" arg { name: "num_workers" i: 2 })" +
                           Fill("a", 1, 2) + "op { type: \"TestDeviceBlock\" name: \"stuck\" " +
                           On(2) + "control_input: \"a\" }" +
                           "op { type: \"Relu\" input: \"a\" output: \"b\" " + On(2) +
                           " control_input: \"a\" }";
  Workspace ws;
  Net* net = ws.CreateNet(NetFromText(text));
  DeviceBlockGate().Close();
  Status s = net->Run();
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
  EXPECT_NE(s.message().find("sim:2 stream"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("op #1 (TestDeviceBlock 'stuck')"), std::string::npos)
      << s.ToString();
  DeviceBlockGate().Open();
  s = net->Run();
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(DeviceExecutorTest, NetsThatTouchABlobOnTheWrongDeviceAreRefusedWhenBuilt) {
  Workspace ws;
  try {
    ws.CreateNet(NetFromText(R"(name: "n")" + Fill("x", 1, 0) +
                             R"(op { type: "Relu" name: "host_relu" input: "x" output: "y" })"));
    FAIL() << "a host op read a device blob";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("net 'n' op #1 (Relu 'host_relu'): blob 'x' is on sim:0 "
                                        "(written there by op #0); copy it to cpu:0 first"),
              std::string::npos)
        << e.what();
  }
  try {
    ws.CreateNet(NetFromText(R"(name: "r" op { type: "IdxImageInput" output: "d" output: "l"
        arg { name: "batch_size" i: 2 } arg { name: "synthetic" i: 1 } )" + On(0) + "}"));
    FAIL() << "a reader ran on a device";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("IdxImageInput runs on the host only"), std::string::npos)
        << e.what();
  }
  try {
    ws.CreateNet(NetFromText(R"(name: "w")" + Fill("x", 1, 0) + Fill("x", 2, 1)));
    FAIL() << "a blob written on two devices";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("a blob lives on one device"), std::string::npos)
        << e.what();
  }
}

TEST_F(DeviceExecutorTest, AKernelReadingABlobFedOnAnotherDeviceNamesBothDevices) {
  Workspace ws;
  NetDef def = NetFromText(R"(name: "fed" external_input: "x"
      op { type: "Relu" name: "r" input: "x" output: "y" )" + On(1) + "}");
  Net* net = ws.CreateNet(def);  // x has no data yet: its device is not known
  Tensor* x = ws.GetBlob("x");
  x->Resize(DType::kFloat32, {4});
  std::memset(x->mutable_data<float>(), 0, 16);
  Status s = net->Run();
  EXPECT_NE(s.message().find("net 'fed' op #0 (Relu 'r'): blob 'x' is on cpu:0; copy it to sim:1 "
                             "first"),
            std::string::npos)
      << s.ToString();
}

TEST_F(DeviceExecutorTest, StreamsAreAFixedFunctionOfTheNetAndTheTraceShowsThem) {
  std::string text = R"(name: "wide" type: "dag" arg { name: "num_workers" i: 3 })";
  for (int i = 0; i < 6; ++i) {
    text += Fill("f" + std::to_string(i), static_cast<float>(i), i % 2);
    text += "op { type: \"Relu\" input: \"f" + std::to_string(i) + "\" output: \"r" +
            std::to_string(i) + "\"" + On(i % 2) + "}";
  }
  text += "op { type: \"Sum\" input: \"r0\" input: \"r2\" input: \"r4\" output: \"s\" " + On(0) +
          "}";
  Workspace ws;
  Net* net = ws.CreateNet(NetFromText(text));
  RecordingObserver observer;
  ChromeTraceWriter trace;
  net->AddObserver(&observer);
  net->AddObserver(&trace);
  for (int run = 0; run < 3; ++run) ASSERT_TRUE(net->Run().ok());
  std::set<int> streams;
  for (size_t i = 0; i < observer.runs[0].size(); ++i) {
    for (int run = 1; run < 3; ++run) {
      EXPECT_EQ(observer.runs[run][i].stream, observer.runs[0][i].stream) << "op " << i;
    }
    streams.insert(observer.runs[0][i].stream);
  }
  EXPECT_GE(streams.size(), 2u);
  const std::string json = trace.Json();
  EXPECT_NE(json.find("\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"sim:"),
            std::string::npos)
      << json.substr(0, 600);
  EXPECT_NE(json.find("\"args\":{\"name\":\"stream 0\"}"), std::string::npos);
  EXPECT_NE(json.find("\"name\":\"launch "), std::string::npos);
  EXPECT_NE(json.find("\"name\":\"wait "), std::string::npos);
}

TEST_F(DeviceExecutorTest, OpsWhoseSizesTheLauncherCannotKnowRunSynchronously) {
  Workspace ws;
  NetDef def = NetFromText(R"(name: "reshape" type: "simple")" + Fill("x", 3, 0) +
                           R"(op { type: "Reshape" input: "x" output: "x" output: "old"
                                   arg { name: "shape" ints: 2 ints: 2 } )" + On(0) + "}" +
                           R"(op { type: "Relu" input: "x" output: "y" )" + On(0) + "}");
  Net* net = ws.CreateNet(def);
  for (int run = 0; run < 2; ++run) {
    Status s = net->Run();
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(ws.GetBlob("y")->shape(), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(HostValues(ws, "y"), std::vector<float>(4, 3.f));
  }
  Tensor old;
  old.CopyFrom(*ws.GetBlob("old"));
  EXPECT_EQ(std::vector<int64_t>(old.data<int64_t>(), old.data<int64_t>() + 1),
            std::vector<int64_t>{4});
}

TEST_F(DeviceExecutorTest, WaitsAreExactlyTheDataflowEdgesBetweenStreams) {
  // op: 0 host, 1 sim:0 s0, 2 sim:0 s1, 3 sim:1 s0, 4 host, 5 sim:0 s0
  DataflowGraph g;
  g.parents = {{}, {0}, {1}, {1, 2}, {3}, {1, 4}};
  g.children.resize(6);
  const std::vector<Device> devices = {Device{},
                                       Device{DeviceType::kSim, 0},
                                       Device{DeviceType::kSim, 0},
                                       Device{DeviceType::kSim, 1},
                                       Device{},
                                       Device{DeviceType::kSim, 0}};
  const std::vector<OpWaits> waits = PlanWaits(g, devices, {0, 0, 1, 0, 0, 0});
  EXPECT_TRUE(waits[1].on_stream.empty() && waits[1].on_host.empty());  // host parent: done
  EXPECT_EQ(waits[2].on_stream, std::vector<int>{1});                   // other stream
  EXPECT_EQ(waits[3].on_stream, (std::vector<int>{1, 2}));              // other device
  EXPECT_EQ(waits[4].on_host, std::vector<int>{3});                     // host after device
  EXPECT_TRUE(waits[5].on_stream.empty());                              // same stream, host
  EXPECT_EQ(waits[5].device_parents, std::vector<int>{1});
}

}  // namespace
}  // namespace braid
