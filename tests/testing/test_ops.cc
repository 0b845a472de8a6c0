#include "testing/test_ops.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "braid/status.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "runtime/device/sim/sim_device.h"
#include "runtime/exec/intra_op_threads.h"
#include "runtime/exec/scratch.h"

namespace braid::testing {

SleepStats& TestSleepStats() {
  static SleepStats stats;
  return stats;
}

std::atomic<bool>& FailArmed() {
  static std::atomic<bool> armed{true};
  return armed;
}

ScratchAreasSeen& TestScratchAreas() {
  static ScratchAreasSeen seen;
  return seen;
}

void Gate::Open() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
  }
  cv_.notify_all();
}

void Gate::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  open_ = false;
}

bool Gate::is_open() {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

void Gate::WaitInSimKernel(const std::string& what) {
  std::unique_lock<std::mutex> lock(mu_);
  SimDevice::WaitInKernel(lock, cv_, [this] { return open_; }, what);
}

Gate& DeviceBlockGate() {
  static Gate gate;
  return gate;
}

namespace {

void RaiseTo(std::atomic<int>& max, int now) {
  int seen = max.load();
  while (now > seen && !max.compare_exchange_weak(seen, now)) {
  }
}

class TestSleepOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    SleepStats& s = TestSleepStats();
    const int team = IntraOpThreads();
    RaiseTo(s.max_running, s.running.fetch_add(1) + 1);
    RaiseTo(s.max_threads, s.threads.fetch_add(team) + team);
    std::this_thread::sleep_for(std::chrono::microseconds(args().Get<int>("us", 1000)));
    s.threads.fetch_sub(team);
    s.running.fetch_sub(1);
  }
};

class TestFailOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    if (FailArmed().load()) throw Error(Status::Internal("injected failure"));
  }
};

class TestScratchOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    ScratchArea& area = ThreadScratch();
    {
      std::lock_guard<std::mutex> lock(TestScratchAreas().mu);
      TestScratchAreas().areas.insert(&area);
    }
    const size_t bytes = args().Get<int64_t>("bytes", 64);
    auto* data = static_cast<unsigned char*>(area.Reserve(bytes));
    const auto mark = static_cast<unsigned char>(net_position() * 37 + 1);
    std::memset(data, mark, bytes);
    std::this_thread::sleep_for(std::chrono::microseconds(args().Get<int>("us", 0)));
    for (size_t i = 0; i < bytes; ++i) {
      if (data[i] != mark) throw Error(Status::Internal("scratch written by another op"));
    }
  }
};

class TestDelayedCopyOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    std::this_thread::sleep_for(std::chrono::microseconds(args().Get<int>("us", 1000)));
    const Tensor& x = Input(0);
    float* y = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
    std::memcpy(y, x.data<float>(), x.nbytes());
  }
};

class TestDeviceBlockOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {
    if (device().type == DeviceType::kSim) DeviceBlockGate().WaitInSimKernel("the test's gate");
  }
};

class TestNoOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override {}
};

}  // namespace

BRAID_OPERATOR_SCHEMA(TestSleep)
    .Arg("us", ArgKind::kInt)
    .SetDoc("Sleeps `us` microseconds; counts concurrency.");
BRAID_OPERATOR_SCHEMA(TestFail).NoArgs().SetDoc("Throws while armed.");
BRAID_OPERATOR_SCHEMA(TestEnforcedInplace)
    .NumInputs(1)
    .NumOutputs(1)
    .EnforceInplace({{0, 0}})
    .NoArgs();
BRAID_OPERATOR_SCHEMA(TestCollective).Collective().NoArgs();
BRAID_OPERATOR_SCHEMA(TestLazy).AllocatesLazily().NoArgs();
BRAID_OPERATOR_SCHEMA(TestScratch)
    .Arg("bytes", ArgKind::kInt)
    .Arg("us", ArgKind::kInt)
    .SetDoc("Uses `bytes` of its thread's scratch area for `us`.");
BRAID_OPERATOR_SCHEMA(TestDelayedCopy)
    .Arg("us", ArgKind::kInt)
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalTypeAndShape()
    .SetDoc("Sleeps `us`, then Y = X.");
BRAID_OPERATOR_SCHEMA(TestDeviceBlock)
    .NumOutputs(0)
    .NoArgs()
    .SetDoc("Blocks a sim kernel at the gate.");

BRAID_REGISTER_CPU_OPERATOR(TestSleep, TestSleepOp);
BRAID_REGISTER_CPU_OPERATOR(TestFail, TestFailOp);
BRAID_REGISTER_CPU_OPERATOR(TestEnforcedInplace, TestNoOp);
BRAID_REGISTER_CPU_OPERATOR(TestCollective, TestNoOp);
BRAID_REGISTER_CPU_OPERATOR(TestLazy, TestNoOp);
BRAID_REGISTER_CPU_OPERATOR(TestScratch, TestScratchOp);
BRAID_REGISTER_CPU_OPERATOR(TestDelayedCopy, TestDelayedCopyOp);
BRAID_REGISTER_CPU_OPERATOR(TestDeviceBlock, TestDeviceBlockOp);

}  // namespace braid::testing
