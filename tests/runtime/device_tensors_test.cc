// Device tensors across the Predictor and the Session (include/braid/tensor_view.h): inputs read
// from a device's memory once the application's stream has written them, outputs written into the
// application's device memory, and copies between devices, all on sim (the simulated GPU; its
// streams stand for the application's), against the same model served from host memory, bit for
// bit; and the refusals. tests/ops/cuda_device_tensors_test.cc runs the same on a GPU.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "braid/device_memory.h"
#include "braid/predictor.h"
#include "braid/session.h"
#include "braid/status.h"
#include "runtime/core/device_context.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "testing/net_text.h"

namespace braid {
namespace {

using braid::testing::NetFromText;

// Memory of a sim device the test owns, as an application owns its GPU buffers
// (<braid/device_memory.h>).
class DeviceBuffer {
 public:
  DeviceBuffer(const std::string& device, size_t bytes) {
    const Status s = DeviceMemory::Allocate(device, static_cast<int64_t>(bytes), &memory_);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  void* data() const { return memory_->data(); }
  void Upload(const std::vector<float>& values) {
    const Status s = memory_->CopyFromHost(values.data(), values.size() * sizeof(float));
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  std::vector<float> Download(size_t count) const {
    std::vector<float> values(count);
    const Status s = memory_->CopyToHost(values.data(), count * sizeof(float));
    EXPECT_TRUE(s.ok()) << s.ToString();
    return values;
  }

 private:
  std::unique_ptr<DeviceMemory> memory_;
};

// Work on a stream: what an application's kernel writing its buffer is to braid.
class FnTask final : public KernelTask {
 public:
  explicit FnTask(std::function<void()> fn) : fn_(std::move(fn)) {}
  void Execute() override { fn_(); }
  void Abandon(const Status&) override {}
  std::string Describe() const override { return "the application's writer"; }

 private:
  std::function<void()> fn_;
};

// The memory the last DeviceTensorsTestAddress op read: where the net found its input.
std::atomic<const void*> g_read_at{nullptr};

// Y = X (float32), recording where X is.
class DeviceTensorsTestAddressOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    const Tensor& x = Input(0);
    g_read_at = x.raw_data();
    float* y = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
    std::memcpy(y, x.data<float>(), x.nbytes());
  }
};

// data [N,4] (its address recorded) * w [4] (broadcast) -> Relu "relu" and Sigmoid "sig": two
// outputs, elementwise ops (one-thread teams, so the test runs under TSan).
std::unique_ptr<Predictor> Make(const PredictorOptions& options) {
  const NetDef init = NetFromText(R"(name: "init"
    op { type: "GivenTensorFill" output: "w" arg { name: "shape" ints: 4 }
         arg { name: "values" floats: 0.5 floats: -2 floats: 1.25 floats: 3 } })");
  const NetDef predict = NetFromText(R"(name: "scaled"
    op { type: "DeviceTensorsTestAddress" input: "data" output: "d" }
    op { type: "Mul" input: "d" input: "w" output: "m" arg { name: "broadcast" i: 1 } }
    op { type: "Relu" input: "m" output: "relu" }
    op { type: "Sigmoid" input: "m" output: "sig" }
    external_input: "data" external_input: "w" external_output: "relu" external_output: "sig")");
  std::unique_ptr<Predictor> predictor;
  const Status status = Predictor::FromNetDefs(init, predict, options, &predictor);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return predictor;
}

std::vector<float> Values(int n, float seed) {
  std::vector<float> values(n);
  for (int i = 0; i < n; ++i) values[i] = seed * static_cast<float>((i * 7) % 13 - 6) / 4;
  return values;
}

std::vector<float> FloatsOf(const OutputTensor& out) {
  const float* p = out.data<float>();
  return p == nullptr ? std::vector<float>{} : std::vector<float>(p, p + out.numel());
}

std::unique_ptr<Predictor> Make(const std::string& device) {
  PredictorOptions options;
  options.device = device;
  options.intra_op_threads = 1;
  return Make(options);
}

// What the model answers for `values` from host memory on the host: the reference.
std::map<std::string, std::vector<float>> HostAnswer(const std::vector<float>& values) {
  const auto cpu = Make("cpu:0");
  std::map<std::string, OutputTensor> outputs;
  const int64_t rows = static_cast<int64_t>(values.size()) / 4;
  const Status s = cpu->Run({{"data", InputView::Of(values.data(), {rows, 4})}}, &outputs);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return {{"relu", FloatsOf(outputs["relu"])}, {"sig", FloatsOf(outputs["sig"])}};
}

// A model on sim:0 reads its input in place from sim:0's memory and writes both outputs into
// sim:0's memory; a model on the host does the same with sim memory (copied through the host).
// Both answer as the host model does from host memory, bit for bit.
TEST(DeviceTensorsTest, PredictorReadsAndWritesDeviceMemory) {
  const std::vector<float> values = Values(12, 1.5f);
  const auto want = HostAnswer(values);
  for (const std::string model_device : {"sim:0", "cpu:0"}) {
    SCOPED_TRACE("model on " + model_device);
    const auto predictor = Make(model_device);
    DeviceBuffer input("sim:0", values.size() * sizeof(float));
    DeviceBuffer relu("sim:0", values.size() * sizeof(float));
    DeviceBuffer sig("sim:0", values.size() * sizeof(float));
    input.Upload(values);
    std::map<std::string, OutputView> outputs{
        {"relu", OutputView::Into(static_cast<float*>(relu.data()), 12, "sim:0")},
        {"sig", OutputView::Into(static_cast<float*>(sig.data()), 12, "sim:0")}};
    const Status s = predictor->Run(
        {{"data", InputView::OnDevice(static_cast<const float*>(input.data()), {3, 4}, "sim:0")}},
        &outputs);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(g_read_at.load() == input.data(), model_device == "sim:0");  // in place: the same
    EXPECT_EQ(outputs["relu"].dtype, DType::kFloat32);
    EXPECT_EQ(outputs["relu"].shape, (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(relu.Download(12), want.at("relu"));
    EXPECT_EQ(sig.Download(12), want.at("sig"));
  }
}

// The application's stream: one braid's nets here never use (they take stream 0 on), standing for
// its cudaStream_t.
Stream* ApplicationStream() { return GetDeviceContext(ParseDevice("sim:0"))->stream(63); }

// Queues, on the application's stream, a writer that sleeps `ms` and then writes `values` at
// `target`: the application's kernel producing the input.
std::unique_ptr<FnTask> QueueWriter(void* target, const std::vector<float>& values, int ms) {
  auto writer = std::make_unique<FnTask>([target, values, ms] {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    std::memcpy(target, values.data(), values.size() * sizeof(float));
  });
  ApplicationStream()->Launch(writer.get());
  return writer;
}

// The input is written by the application's stream 100 ms after the Run is called: braid reads it
// after that work, never the stale values the buffer held at the call. The signature ran once
// before, so the Run allocates nothing (an allocation on sim drains every stream, which would hide
// a missing wait); synchronously, and asynchronously (RunAsync returns before the stream is done).
TEST(DeviceTensorsTest, AnInputIsReadAfterTheApplicationsStreamWroteIt) {
  const std::vector<float> stale = Values(8, -1.f);
  const std::vector<float> fresh = Values(8, 2.f);
  const auto want = HostAnswer(fresh);
  const auto predictor = Make("sim:0");
  DeviceBuffer input("sim:0", 8 * sizeof(float));
  const InputView view = InputView::OnDevice(static_cast<const float*>(input.data()), {2, 4},
                                             "sim:0", ApplicationStream());
  std::map<std::string, OutputTensor> outputs;
  input.Upload(stale);
  ASSERT_TRUE(predictor->Run({{"data", view}}, &outputs).ok());  // warm: planned and allocated
  auto writer = QueueWriter(input.data(), fresh, 100);
  const Status s = predictor->Run({{"data", view}}, &outputs);
  ApplicationStream()->Synchronize();  // `writer` outlives its work either way
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(FloatsOf(outputs["relu"]), want.at("relu"));

  input.Upload(stale);
  writer = QueueWriter(input.data(), fresh, 100);
  const auto queued_at = std::chrono::steady_clock::now();
  std::future<RunResult> pending = predictor->RunAsync({{"data", view}});
  EXPECT_LT(std::chrono::steady_clock::now() - queued_at, std::chrono::milliseconds(80));
  RunResult result = pending.get();
  ApplicationStream()->Synchronize();
  ASSERT_TRUE(result.status.ok()) << result.status.ToString();
  EXPECT_EQ(FloatsOf(result.outputs["relu"]), want.at("relu"));
}

// A deadline bounds the wait for the application's stream: the Run ends DeadlineExceeded, saying
// it waited for the streams, without running.
TEST(DeviceTensorsTest, TheWaitForTheApplicationsStreamEndsAtTheDeadline) {
  const auto predictor = Make("sim:0");
  DeviceBuffer input("sim:0", 4 * sizeof(float));
  input.Upload(Values(4, 1.f));
  auto writer = QueueWriter(input.data(), Values(4, 3.f), 300);
  RunOptions options;
  options.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
  std::map<std::string, OutputTensor> outputs;
  const Status s =
      predictor->Run({{"data", InputView::OnDevice(static_cast<const float*>(input.data()), {1, 4},
                                                   "sim:0", ApplicationStream())}},
                     &outputs, options);
  const bool stream_still_busy =
      !GetDeviceContext(ParseDevice("sim:0"))->MarkApplicationStream(ApplicationStream())->Query();
  ApplicationStream()->Synchronize();
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
  EXPECT_NE(s.message().find("waited for the applications' streams"), std::string::npos)
      << s.ToString();
  EXPECT_TRUE(stream_still_busy);  // it returned at the deadline, not when the stream was done
  EXPECT_TRUE(outputs.empty());
}

// The caller's memory is lent for one call: a Run that reads its input in place, then one whose
// input must be copied (another device's memory), writes the copy into braid's own memory, never
// into the buffer the first caller lent (which may be gone by then).
TEST(DeviceTensorsTest, ALentInputIsNeverWrittenByALaterRun) {
  const auto predictor = Make("cpu:0");
  std::vector<float> lent = Values(4, 1.f);
  const std::vector<float> kept = lent;
  std::map<std::string, OutputTensor> outputs;
  ASSERT_TRUE(predictor->Run({{"data", InputView::Of(lent.data(), {1, 4})}}, &outputs).ok());
  EXPECT_EQ(g_read_at.load(), lent.data());  // in place
  DeviceBuffer other("sim:0", 4 * sizeof(float));
  const std::vector<float> values = Values(4, -2.f);
  other.Upload(values);
  const Status s = predictor->Run(
      {{"data", InputView::OnDevice(static_cast<const float*>(other.data()), {1, 4}, "sim:0")}},
      &outputs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(lent, kept);
  EXPECT_NE(g_read_at.load(), lent.data());
  EXPECT_EQ(FloatsOf(outputs["relu"]), HostAnswer(values).at("relu"));
}

// Four threads share a Predictor of two contexts on sim:0, each with device buffers of its own and
// its own values: every answer is the host model's for its thread's values, bit for bit.
TEST(DeviceTensorsTest, ConcurrentRunsFromAndIntoDeviceMemoryAnswerEachTheirOwn) {
  PredictorOptions options;
  options.device = "sim:0";
  options.max_concurrent_runs = 2;
  options.intra_op_threads = 1;
  const auto predictor = Make(options);
  std::vector<std::thread> clients;
  std::atomic<int> wrong{0}, failed{0};
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      const std::vector<float> values = Values(16, 0.5f + static_cast<float>(t));
      const auto want = HostAnswer(values);
      DeviceBuffer input("sim:0", values.size() * sizeof(float));
      DeviceBuffer sig("sim:0", values.size() * sizeof(float));
      input.Upload(values);
      for (int r = 0; r < 10; ++r) {
        std::map<std::string, OutputView> outputs{
            {"sig", OutputView::Into(static_cast<float*>(sig.data()), 16, "sim:0")}};
        const Status s = predictor->Run(
            {{"data",
              InputView::OnDevice(static_cast<const float*>(input.data()), {4, 4}, "sim:0")}},
            &outputs);
        failed += !s.ok();
        wrong += s.ok() && sig.Download(16) != want.at("sig");
      }
    });
  }
  for (std::thread& client : clients) client.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

// Only the outputs the caller names are written; host buffers work as device ones do.
TEST(DeviceTensorsTest, OnlyTheNamedOutputsAreWrittenAndHostBuffersWorkToo) {
  const std::vector<float> values = Values(4, 0.75f);
  const auto want = HostAnswer(values);
  const auto predictor = Make("sim:0");
  std::vector<float> sig(4, -7.f);
  std::map<std::string, OutputView> outputs{{"sig", OutputView::Into(sig.data(), 4)}};
  const Status s = predictor->Run({{"data", InputView::Of(values.data(), {1, 4})}}, &outputs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(sig, want.at("sig"));
  EXPECT_EQ(outputs.size(), 1u);
}

void ExpectRefused(const Status& s, const std::vector<std::string>& words) {
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  for (const std::string& word : words) {
    EXPECT_NE(s.message().find(word), std::string::npos) << s.ToString() << " lacks " << word;
  }
}

TEST(DeviceTensorsTest, BadDeviceViewsAreRefusedNamingTheTensorAndTheDevice) {
  const auto predictor = Make("sim:0");
  const std::vector<float> values = Values(4, 1.f);
  std::map<std::string, OutputTensor> host_outputs;
  auto run = [&](InputView view) { return predictor->Run({{"data", view}}, &host_outputs); };
  InputView on_gpu = InputView::Of(values.data(), {1, 4});
  on_gpu.device = "gpu:0";
  ExpectRefused(run(on_gpu), {"predictor 'scaled'", "input 'data'", "gpu:0"});
  on_gpu.device = "sim:99";
  ExpectRefused(run(on_gpu), {"input 'data'", "sim:99", "does not exist"});
  InputView host_with_stream = InputView::Of(values.data(), {1, 4});
  host_with_stream.stream = GetDeviceContext(ParseDevice("sim:0"))->stream(0);
  ExpectRefused(run(host_with_stream), {"input 'data'", "host memory", "stream"});
  InputView cpu_with_stream = host_with_stream;
  cpu_with_stream.device = "cpu:0";
  ExpectRefused(run(cpu_with_stream), {"input 'data'", "host memory", "stream"});

  // Every output is checked before any is written: `relu` fits, `sig` does not, and neither is
  // written.
  std::vector<float> relu(4, 9.f);
  DeviceBuffer small("sim:0", 3 * sizeof(float));
  std::map<std::string, OutputView> outputs{
      {"relu", OutputView::Into(relu.data(), 4)},
      {"sig", OutputView::Into(static_cast<float*>(small.data()), 3, "sim:0")}};
  ExpectRefused(predictor->Run({{"data", InputView::Of(values.data(), {1, 4})}}, &outputs),
                {"predictor 'scaled': output 'sig'", "needs 16 bytes", "holds 12"});
  EXPECT_EQ(outputs["sig"].shape, (std::vector<int64_t>{1, 4}));  // what it needs
  EXPECT_EQ(relu, std::vector<float>(4, 9.f));
  // The same with the first view (in name order) too small: the later one's shape is set too.
  std::vector<float> sig(4, 9.f);
  std::map<std::string, OutputView> first_small{
      {"relu", OutputView::Into(static_cast<float*>(small.data()), 3, "sim:0")},
      {"sig", OutputView::Into(sig.data(), 4)}};
  ExpectRefused(predictor->Run({{"data", InputView::Of(values.data(), {1, 4})}}, &first_small),
                {"output 'relu'", "needs 16 bytes"});
  EXPECT_EQ(first_small["sig"].shape, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(sig, std::vector<float>(4, 9.f));
  // A buffer of another dtype.
  std::vector<int32_t> ints(4);
  std::map<std::string, OutputView> as_ints{{"relu", OutputView::Into(ints.data(), 4)}};
  ExpectRefused(predictor->Run({{"data", InputView::Of(values.data(), {1, 4})}}, &as_ints),
                {"output 'relu' is float32, its buffer holds int32"});
  std::vector<float> out(4);
  std::map<std::string, OutputView> unknown{{"prob", OutputView::Into(out.data(), 4)}};
  ExpectRefused(predictor->Run({{"data", InputView::Of(values.data(), {1, 4})}}, &unknown),
                {"'prob' is not an output", "'relu', 'sig'"});
  std::map<std::string, OutputView> elsewhere{{"sig", OutputView::Into(out.data(), 4, "sim:99")}};
  ExpectRefused(predictor->Run({{"data", InputView::Of(values.data(), {1, 4})}}, &elsewhere),
                {"predictor 'scaled': output 'sig' is on 'sim:99'"});
  // A stream that is not the device's.
  InputView foreign = InputView::Of(values.data(), {1, 4});
  foreign.device = "sim:0";
  foreign.stream = GetDeviceContext(ParseDevice("sim:1"))->stream(0);
  ExpectRefused(run(foreign), {"predictor 'scaled': input 'data' on sim:0", "not one of sim:0"});
}

TEST(DeviceTensorsTest, DeviceMemoryRefusesCopiesPastItsEndAndDevicesBraidCannotUse) {
  std::unique_ptr<DeviceMemory> memory;
  ASSERT_TRUE(DeviceMemory::Allocate("sim:0", 8, &memory).ok());
  EXPECT_EQ(memory->bytes(), 8);
  EXPECT_EQ(memory->device(), "sim:0");
  std::vector<float> three(3);
  ExpectRefused(memory->CopyFromHost(three.data(), 12), {"12 bytes of 8 on sim:0"});
  ExpectRefused(memory->CopyToHost(three.data(), -4), {"-4 bytes of 8 on sim:0"});
  std::unique_ptr<DeviceMemory> none;
  ExpectRefused(DeviceMemory::Allocate("sim:99", 8, &none), {"sim:99"});
  ExpectRefused(DeviceMemory::Allocate("tpu:0", 8, &none), {"tpu:0"});
  ExpectRefused(DeviceMemory::Allocate("sim:0", -1, &none), {"-1 bytes"});
  EXPECT_EQ(none, nullptr);
}

// The Session feeds from one device's memory into a blob on another (sim:1 into sim:0: a copy on
// the devices), runs, and fetches into either device's memory or the host's.
TEST(DeviceTensorsTest, SessionFeedsFromAndFetchesIntoDeviceMemory) {
  const std::vector<float> values = Values(6, 1.f);
  Session session;
  ASSERT_TRUE(session.SetDevice("sim:0").ok());
  DeviceBuffer source("sim:1", 6 * sizeof(float));
  source.Upload(values);
  Status s = session.Feed(
      "x", InputView::OnDevice(static_cast<const float*>(source.data()), {2, 3}, "sim:1"));
  ASSERT_TRUE(s.ok()) << s.ToString();
  DeviceBuffer on_sim0("sim:0", 6 * sizeof(float));
  DeviceBuffer on_sim1("sim:1", 6 * sizeof(float));
  std::vector<float> on_host(6);
  OutputView into_sim0 = OutputView::Into(static_cast<float*>(on_sim0.data()), 6, "sim:0");
  OutputView into_sim1 = OutputView::Into(static_cast<float*>(on_sim1.data()), 6, "sim:1");
  OutputView into_host = OutputView::Into(on_host.data(), 6);
  for (OutputView* view : {&into_sim0, &into_sim1, &into_host}) {
    s = session.Fetch("x", view);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(view->shape, (std::vector<int64_t>{2, 3}));
  }
  EXPECT_EQ(on_sim0.Download(6), values);
  EXPECT_EQ(on_sim1.Download(6), values);
  EXPECT_EQ(on_host, values);
  std::vector<float> small(5);
  OutputView too_small = OutputView::Into(small.data(), 5);
  ExpectRefused(session.Fetch("x", &too_small), {"blob 'x'", "needs 24 bytes", "holds 20"});
}

}  // namespace

BRAID_OPERATOR_SCHEMA(DeviceTensorsTestAddress)
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalTypeAndShape()
    .SetDoc("Y = X, recording where X is (device_tensors_test.cc).");
BRAID_REGISTER_CPU_OPERATOR(DeviceTensorsTestAddress, DeviceTensorsTestAddressOp);

}  // namespace braid
