// Predictor's serving controls (include/braid/predictor.h): deadlines and cancellation of waiting
// and running requests, RunAsync against Run, many asynchronous requests at once, and destroying a
// Predictor with requests outstanding. Queues are made deterministically: a gate op
// (ServingTestGate, below) holds the only request context until the test opens it, and counts its
// runs, which proves whether a request ran. Ops run one-thread teams (intra_op_threads 1) and are
// elementwise, so that the test runs under TSan without uninstrumented OpenMP or BLAS threads.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "braid/predictor.h"
#include "braid/status.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "testing/net_text.h"

namespace braid {
namespace {

using Clock = std::chrono::steady_clock;
using braid::testing::NetFromText;

// Where ServingTestGate ops wait, and what they record.
struct GateState {
  std::mutex mu;
  std::condition_variable changed;
  bool open = true;          // guarded by mu
  int inside = 0;            // guarded by mu: gate ops waiting now
  std::map<int, int> runs;   // guarded by mu: runs by the op's `id` argument

  void Reset() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    inside = 0;
    runs.clear();
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu);
    open = false;
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(mu);
      open = true;
    }
    changed.notify_all();
  }
  void WaitUntilInside(int n) {
    std::unique_lock<std::mutex> lock(mu);
    changed.wait(lock, [&] { return inside == n; });
  }
  // Waits until n gate ops wait, or `ended` is ready (false: the request ended before the gate).
  template <typename T>
  bool WaitUntilInsideOrEnded(int n, const std::future<T>& ended) {
    std::unique_lock<std::mutex> lock(mu);
    while (!changed.wait_for(lock, std::chrono::milliseconds(2), [&] { return inside == n; })) {
      if (ended.wait_for(std::chrono::seconds(0)) == std::future_status::ready) return false;
    }
    return true;
  }
  int Runs(int id) {
    std::lock_guard<std::mutex> lock(mu);
    return runs[id];
  }
};

GateState& Gate() {
  static GateState gate;
  return gate;
}

// Y = X (float32), after counting the run and waiting while the gate is closed.
class ServingTestGateOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    GateState& gate = Gate();
    {
      std::unique_lock<std::mutex> lock(gate.mu);
      ++gate.runs[args().Get<int>("id", 0)];
      ++gate.inside;
      gate.changed.notify_all();
      gate.changed.wait(lock, [&] { return gate.open; });
      --gate.inside;
      gate.changed.notify_all();
    }
    const Tensor& x = Input(0);
    float* y = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
    std::memcpy(y, x.data<float>(), x.nbytes());
  }
};

// out = Relu(data * w + b) over [2, 4], two gate ops (ids 1 and 2) between the Mul and the Add.
NetDef InitNet() {
  return NetFromText(R"(name: "init"
    op { type: "GivenTensorFill" output: "w" arg { name: "shape" ints: 2 ints: 4 }
         arg { name: "values" floats: 1 floats: -2 floats: 0.5 floats: 3
                              floats: -1 floats: 0.25 floats: 2 floats: -0.5 } }
    op { type: "GivenTensorFill" output: "b" arg { name: "shape" ints: 2 ints: 4 }
         arg { name: "values" floats: 0.5 floats: 1 floats: -1 floats: 0
                              floats: 2 floats: -0.5 floats: 0.25 floats: 1 } })");
}

NetDef PredictNet() {
  return NetFromText(R"(name: "gated"
    op { type: "Mul" input: "data" input: "w" output: "scaled" }
    op { type: "ServingTestGate" input: "scaled" output: "gated1" arg { name: "id" i: 1 } }
    op { type: "ServingTestGate" input: "gated1" output: "gated2" arg { name: "id" i: 2 } }
    op { type: "Add" input: "gated2" input: "b" output: "sum" }
    op { type: "Relu" input: "sum" output: "out" }
    external_input: "data" external_input: "w" external_input: "b" external_output: "out")");
}

const float kW[8] = {1, -2, 0.5, 3, -1, 0.25, 2, -0.5};
const float kB[8] = {0.5, 1, -1, 0, 2, -0.5, 0.25, 1};

std::vector<float> Data(int seed) {
  std::vector<float> data(8);
  for (int i = 0; i < 8; ++i) data[i] = static_cast<float>((i * 5 + seed * 3) % 11) / 4 - 1;
  return data;
}

// The answer worked out here: max(data * w + b, 0), each step a float operation as the ops do.
std::vector<float> Expected(const std::vector<float>& data) {
  std::vector<float> out(8);
  for (int i = 0; i < 8; ++i) {
    volatile float product = data[i] * kW[i];  // rounded as Mul rounds it (never fused with +)
    const float sum = product + kB[i];
    out[i] = sum > 0 ? sum : 0;
  }
  return out;
}

std::vector<float> Values(const OutputTensor& out) {
  const float* values = out.data<float>();
  if (values == nullptr) return {};
  return std::vector<float>(values, values + out.numel());
}

std::map<std::string, InputView> Inputs(const std::vector<float>& data) {
  return {{"data", InputView::Of(data.data(), {2, 4})}};
}

class PredictorServingTest : public ::testing::TestWithParam<int> {  // workers per run
 protected:
  void SetUp() override { Gate().Reset(); }
  void TearDown() override { Gate().Open(); }

  std::unique_ptr<Predictor> Make(int contexts) {
    PredictorOptions options;
    options.max_concurrent_runs = contexts;
    options.workers_per_run = GetParam();
    options.intra_op_threads = 1;
    std::unique_ptr<Predictor> predictor;
    const Status status = Predictor::FromNetDefs(InitNet(), PredictNet(), options, &predictor);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return predictor;
  }
};

TEST_P(PredictorServingTest, AQueuedRequestPastItsDeadlineReturnsDeadlineExceededWithoutRunning) {
  std::unique_ptr<Predictor> predictor = Make(1);
  const std::vector<float> first = Data(1), second = Data(2);
  Gate().Close();
  std::map<std::string, OutputTensor> first_out;
  std::thread holder([&] { EXPECT_TRUE(predictor->Run(Inputs(first), &first_out).ok()); });
  Gate().WaitUntilInside(1);  // the only context is taken until the gate opens

  RunOptions options;
  options.deadline = Clock::now() + std::chrono::milliseconds(30);
  std::map<std::string, OutputTensor> second_out;
  const Status late = predictor->Run(Inputs(second), &second_out, options);
  EXPECT_TRUE(Clock::now() >= options.deadline);  // it waited until its deadline
  EXPECT_EQ(late.code(), StatusCode::kDeadlineExceeded) << late.ToString();
  EXPECT_NE(late.message().find("predictor 'gated'"), std::string::npos) << late.ToString();
  EXPECT_NE(late.message().find("did not run"), std::string::npos) << late.ToString();
  EXPECT_TRUE(second_out.empty());
  EXPECT_EQ(Gate().Runs(1), 1);  // only the first request's

  Gate().Open();
  holder.join();
  EXPECT_EQ(Values(first_out.at("out")), Expected(first));
  EXPECT_EQ(Gate().Runs(1), 1);
  EXPECT_EQ(Gate().Runs(2), 1);
}

TEST_P(PredictorServingTest, ACancelledWaitingRequestReturnsCancelledWithoutRunning) {
  std::unique_ptr<Predictor> predictor = Make(1);
  const std::vector<float> first = Data(1), second = Data(2);
  Gate().Close();
  std::thread holder([&] {
    std::map<std::string, OutputTensor> out;
    EXPECT_TRUE(predictor->Run(Inputs(first), &out).ok());
  });
  Gate().WaitUntilInside(1);

  std::stop_source cancel;
  RunOptions options;  // no deadline: only the cancel can end its wait
  options.stop = cancel.get_token();
  std::promise<Status> waited;
  std::thread waiter([&] {
    std::map<std::string, OutputTensor> out;
    waited.set_value(predictor->Run(Inputs(second), &out, options));
  });
  std::future<Status> result = waited.get_future();
  // Not needed for the outcome (a cancel before the wait is refused at the call), only so that
  // the wait itself is what the cancel usually ends.
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  cancel.request_stop();
  const Status cancelled = result.get();  // while the gate is still closed: the cancel woke it
  EXPECT_EQ(cancelled.code(), StatusCode::kCancelled) << cancelled.ToString();
  EXPECT_EQ(cancelled.ToString().rfind("Cancelled: predictor 'gated'", 0), 0u)
      << cancelled.ToString();
  EXPECT_EQ(Gate().Runs(1), 1);
  Gate().Open();
  waiter.join();
  holder.join();
  EXPECT_EQ(Gate().Runs(1), 1);
}

TEST_P(PredictorServingTest, ADeadlinePassedOrACancelAtCallTimeRunsNothing) {
  std::unique_ptr<Predictor> predictor = Make(1);
  const std::vector<float> data = Data(3);
  RunOptions past;
  past.deadline = Clock::now() - std::chrono::milliseconds(1);
  std::map<std::string, OutputTensor> out;
  EXPECT_EQ(predictor->Run(Inputs(data), &out, past).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(predictor->RunAsync(Inputs(data), past).get().status.code(),
            StatusCode::kDeadlineExceeded);

  std::stop_source cancel;
  cancel.request_stop();
  RunOptions cancelled;
  cancelled.stop = cancel.get_token();
  EXPECT_EQ(predictor->Run(Inputs(data), &out, cancelled).code(), StatusCode::kCancelled);
  EXPECT_EQ(predictor->RunAsync(Inputs(data), cancelled).get().status.code(),
            StatusCode::kCancelled);

  EXPECT_TRUE(out.empty());
  EXPECT_EQ(Gate().Runs(1), 0);
  EXPECT_EQ(predictor->memory().contexts, 0);  // not even a context was made
}

TEST_P(PredictorServingTest, ARunningRequestStopsBeforeItsNextOp) {
  for (const bool by_deadline : {true, false}) {
    SCOPED_TRACE(by_deadline ? "deadline" : "cancel");
    Gate().Reset();
    std::unique_ptr<Predictor> predictor = Make(1);
    const std::vector<float> data = Data(4);
    std::stop_source cancel;
    RunOptions options;
    options.stop = cancel.get_token();
    std::future<RunResult> pending;
    // The deadline must pass inside the first gate op, after the request reached it: on a slow
    // or loaded machine (TSan) a request may not reach it in time; then it is sent again with
    // twice the time (what such a request did is checked by the test above).
    for (auto budget = std::chrono::milliseconds(25);; budget *= 2) {
      ASSERT_LT(budget, std::chrono::seconds(30));
      Gate().Reset();
      if (by_deadline) options.deadline = Clock::now() + budget;
      Gate().Close();
      pending = predictor->RunAsync(Inputs(data), options);
      if (Gate().WaitUntilInsideOrEnded(1, pending)) break;  // inside the first gate op
      Gate().Open();
    }
    if (by_deadline) {
      std::this_thread::sleep_until(options.deadline + std::chrono::milliseconds(1));
    } else {
      cancel.request_stop();
    }
    Gate().Open();
    const RunResult result = pending.get();
    EXPECT_EQ(result.status.code(),
              by_deadline ? StatusCode::kDeadlineExceeded : StatusCode::kCancelled)
        << result.status.ToString();
    // It names the op it stopped before: the second gate, which never ran.
    EXPECT_NE(result.status.message().find("stopped before net 'gated' op #2 (ServingTestGate"),
              std::string::npos)
        << result.status.ToString();
    EXPECT_EQ(Gate().Runs(1), 1);
    EXPECT_EQ(Gate().Runs(2), 0);
    EXPECT_TRUE(result.outputs.empty());

    // The context and its net serve the next request as before.
    std::map<std::string, OutputTensor> out;
    ASSERT_TRUE(predictor->Run(Inputs(data), &out).ok());
    EXPECT_EQ(Values(out.at("out")), Expected(data));
  }
}

TEST_P(PredictorServingTest, AQueuedAsyncRequestEndsAtItsDeadlineOrCancelWithoutRunning) {
  std::unique_ptr<Predictor> predictor = Make(1);
  const std::vector<float> first = Data(1), second = Data(2), third = Data(3);
  Gate().Close();
  std::future<RunResult> holder = predictor->RunAsync(Inputs(first));
  Gate().WaitUntilInside(1);

  RunOptions soon;
  soon.deadline = Clock::now() + std::chrono::milliseconds(20);
  std::stop_source cancel;
  RunOptions cancellable;
  cancellable.stop = cancel.get_token();
  std::future<RunResult> late = predictor->RunAsync(Inputs(second), soon);
  std::future<RunResult> cancelled = predictor->RunAsync(Inputs(third), cancellable);
  // The pool's spare thread ends them while the only context is still held.
  const RunResult late_result = late.get();
  EXPECT_TRUE(Clock::now() >= soon.deadline);
  EXPECT_EQ(late_result.status.code(), StatusCode::kDeadlineExceeded)
      << late_result.status.ToString();
  cancel.request_stop();
  EXPECT_EQ(cancelled.get().status.code(), StatusCode::kCancelled);
  EXPECT_EQ(Gate().Runs(1), 1);

  Gate().Open();
  const RunResult first_result = holder.get();
  ASSERT_TRUE(first_result.status.ok()) << first_result.status.ToString();
  EXPECT_EQ(Values(first_result.outputs.at("out")), Expected(first));
  EXPECT_EQ(Gate().Runs(1), 1);
}

TEST_P(PredictorServingTest, AsyncResultsEqualSyncResults) {
  std::unique_ptr<Predictor> predictor = Make(2);
  std::vector<std::vector<float>> data;
  for (int seed = 0; seed < 8; ++seed) data.push_back(Data(seed));
  std::vector<std::future<RunResult>> pending;
  for (const auto& d : data) pending.push_back(predictor->RunAsync(Inputs(d)));
  for (size_t i = 0; i < data.size(); ++i) {
    std::map<std::string, OutputTensor> sync;
    ASSERT_TRUE(predictor->Run(Inputs(data[i]), &sync).ok());
    RunResult async = pending[i].get();
    ASSERT_TRUE(async.status.ok()) << async.status.ToString();
    EXPECT_EQ(async.outputs.at("out").shape, sync.at("out").shape);
    EXPECT_EQ(async.outputs.at("out").bytes, sync.at("out").bytes);
    EXPECT_EQ(Values(async.outputs.at("out")), Expected(data[i]));
  }
  // A bad input is refused at once, as Run refuses it.
  const RunResult bad =
      predictor->RunAsync({{"image", InputView::Of(data[0].data(), {2, 4})}}).get();
  EXPECT_EQ(bad.status.code(), StatusCode::kInvalidArgument) << bad.status.ToString();
}

TEST_P(PredictorServingTest, ManyConcurrentAsyncRunsAllAnswerCorrectly) {
  std::unique_ptr<Predictor> predictor = Make(3);
  constexpr int kClients = 4, kPerClient = 50;
  std::vector<std::vector<float>> data;
  for (int seed = 0; seed < 16; ++seed) data.push_back(Data(seed));
  std::vector<std::vector<std::future<RunResult>>> pending(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int r = 0; r < kPerClient; ++r) {
        pending[c].push_back(predictor->RunAsync(Inputs(data[(c * 7 + r) % data.size()])));
      }
    });
  }
  for (std::thread& client : clients) client.join();
  for (int c = 0; c < kClients; ++c) {
    for (int r = 0; r < kPerClient; ++r) {
      RunResult result = pending[c][r].get();
      ASSERT_TRUE(result.status.ok()) << result.status.ToString();
      EXPECT_EQ(Values(result.outputs.at("out")), Expected(data[(c * 7 + r) % data.size()]));
    }
  }
  EXPECT_EQ(Gate().Runs(1), kClients * kPerClient);
  EXPECT_LE(predictor->memory().contexts, 3);
}

TEST_P(PredictorServingTest, DestroyingAPredictorCancelsQueuedRequestsAndWaitsForRunningOnes) {
  std::unique_ptr<Predictor> predictor = Make(1);
  const std::vector<float> first = Data(1), second = Data(2), third = Data(3);
  Gate().Close();
  std::future<RunResult> running = predictor->RunAsync(Inputs(first));
  Gate().WaitUntilInside(1);
  std::future<RunResult> queued1 = predictor->RunAsync(Inputs(second));
  std::future<RunResult> queued2 = predictor->RunAsync(Inputs(third));

  std::thread destroyer([&] { predictor.reset(); });
  const RunResult never_run = queued1.get();  // ended by the destructor, the gate still closed
  EXPECT_EQ(never_run.status.code(), StatusCode::kCancelled) << never_run.status.ToString();
  EXPECT_NE(never_run.status.message().find("destroyed before the request ran"), std::string::npos)
      << never_run.status.ToString();
  EXPECT_EQ(queued2.get().status.code(), StatusCode::kCancelled);
  // The destructor waits for the running request: it cannot have finished while the gate is shut.
  EXPECT_EQ(running.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  Gate().Open();
  destroyer.join();
  const RunResult finished = running.get();  // the future outlives the Predictor
  ASSERT_TRUE(finished.status.ok()) << finished.status.ToString();
  EXPECT_EQ(Values(finished.outputs.at("out")), Expected(first));
  EXPECT_EQ(Gate().Runs(1), 1);
}

INSTANTIATE_TEST_SUITE_P(Executors, PredictorServingTest, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == 1 ? std::string("Simple") : std::string("Dag");
                         });

TEST(StatusTest, CancelledAndDeadlineExceededHaveTheirNames) {
  EXPECT_EQ(Status::Cancelled("x").ToString(), "Cancelled: x");
  EXPECT_EQ(Status::DeadlineExceeded("y").ToString(), "DeadlineExceeded: y");
}

}  // namespace

BRAID_OPERATOR_SCHEMA(ServingTestGate)
    .Arg("id", ArgKind::kInt)
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalTypeAndShape()
    .SetDoc("Counts its runs by `id`, waits while the test's gate is closed, then Y = X.");
BRAID_REGISTER_CPU_OPERATOR(ServingTestGate, ServingTestGateOp);

}  // namespace braid
