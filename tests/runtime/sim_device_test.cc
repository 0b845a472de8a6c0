// The simulated GPU's streams, events, memory, driver lock, watchdog and logical devices
// (runtime/device/sim/sim_device.h).
#include "runtime/device/sim/sim_device.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <numeric>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "braid/status.h"
#include "runtime/core/tensor.h"
#include "testing/test_ops.h"

namespace braid {
namespace {

using namespace std::chrono_literals;
using ::braid::testing::DeviceBlockGate;

// A kernel that runs a function on the stream's thread and records what happened to it.
class FnTask final : public KernelTask {
 public:
  explicit FnTask(std::function<void()> fn, std::string name = "fn")
      : fn_(std::move(fn)), name_(std::move(name)) {}
  void Execute() override {
    try {
      fn_();
      ran = true;
    } catch (const Error& e) {
      error = e.status();
    }
  }
  void Abandon(const Status& why) override { error = why; }
  std::string Describe() const override { return name_; }

  std::atomic<bool> ran{false};
  Status error;  // read after the stream has served the task

 private:
  std::function<void()> fn_;
  std::string name_;
};

// Restores the default options when a test changed them.
class SimDeviceTest : public ::testing::Test {
 protected:
  void TearDown() override {
    SetSimDeviceOptions(SimDeviceOptions());
    DeviceBlockGate().Open();
  }
};

// Options a flag can set (--device-memory 0) used to CHECK-abort the process.
TEST(SimDeviceOptionsTest, ImpossibleOptionsAreErrorsThatChangeNothing) {
  const SimDeviceOptions saved = GetSimDeviceOptions();
  for (int bad = 0; bad < 4; ++bad) {
    SimDeviceOptions o = saved;
    if (bad == 0) o.capacity_bytes = 0;
    if (bad == 1) o.watchdog = std::chrono::milliseconds(-5);
    if (bad == 2) o.physical_ids = {0, SimDevice::kMaxDevices};
    if (bad == 3) o.physical_ids.assign(SimDevice::kMaxDevices + 1, 0);
    try {
      SetSimDeviceOptions(o);
      ADD_FAILURE() << "accepted bad option " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument) << e.what();
      EXPECT_NE(e.status().message().find("sim device options"), std::string::npos) << e.what();
    }
    EXPECT_EQ(GetSimDeviceOptions().capacity_bytes, saved.capacity_bytes);
    EXPECT_EQ(GetSimDeviceOptions().physical_ids, saved.physical_ids);
  }
}

TEST_F(SimDeviceTest, LaunchReturnsAtOnceAndAStreamRunsItsKernelsInOrder) {
  Stream* s = SimDevice::Get(0)->stream(0);
  std::vector<int> order;  // written by the stream's thread only
  FnTask slow([&] {
    std::this_thread::sleep_for(50ms);
    order.push_back(1);
  });
  FnTask fast([&] { order.push_back(2); });
  const auto start = std::chrono::steady_clock::now();
  s->Launch(&slow);
  s->Launch(&fast);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 40ms);
  s->Synchronize();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST_F(SimDeviceTest, KernelsRunOnTheStreamThreadWithTheirDeviceCurrent) {
  Stream* s = SimDevice::Get(1)->stream(2);
  Device seen;
  std::thread::id thread;
  FnTask task([&] {
    seen = CurrentDevice();
    thread = std::this_thread::get_id();
  });
  s->Launch(&task);
  s->Synchronize();
  EXPECT_EQ(seen, (Device{DeviceType::kSim, 1}));
  EXPECT_NE(thread, std::this_thread::get_id());
  EXPECT_TRUE(CurrentDevice().is_host());
}

// Stream b (on another device) waits for an event recorded after a kernel that is held at a gate:
// the wait is on the device, so the host goes on, and b's kernel sees the producer's write.
TEST_F(SimDeviceTest, AWaitOrdersStreamsOfTwoDevicesWithoutBlockingTheHost) {
  for (bool wait : {true, false}) {
    DeviceBlockGate().Close();
    int x = 0;
    std::atomic<int> seen{-1};
    FnTask producer([&] {
      DeviceBlockGate().WaitInSimKernel("gate");
      x = 1;
    });
    FnTask consumer([&] { seen = x; });
    std::unique_ptr<Event> done = SimDevice::Get(0)->CreateEvent("producer");
    Stream* a = SimDevice::Get(0)->stream(0);
    Stream* b = SimDevice::Get(1)->stream(0);
    a->Launch(&producer);
    a->Record(done.get());
    EXPECT_FALSE(done->Query());
    if (wait) b->Wait(done.get());
    b->Launch(&consumer);
    std::this_thread::sleep_for(30ms);
    if (wait) {
      EXPECT_EQ(seen.load(), -1) << "the consumer ran before the event";
    } else {
      b->Synchronize();
      EXPECT_EQ(seen.load(), 0) << "without the wait the consumer runs before the producer";
    }
    DeviceBlockGate().Open();
    done->HostWait();
    EXPECT_TRUE(done->Query());
    b->Synchronize();
    if (wait) {
      EXPECT_EQ(seen.load(), 1);
    }
  }
}

TEST_F(SimDeviceTest, CopiesBothWaysKeepTheBytesAndHostReadsAreRefused) {
  Tensor host(DType::kFloat32, {2, 3});
  float* h = host.mutable_data<float>();
  for (int i = 0; i < 6; ++i) h[i] = 0.5f * static_cast<float>(i) - 1;
  Tensor on_device(Device{DeviceType::kSim, 0});
  on_device.CopyFrom(host);
  EXPECT_EQ(on_device.shape(), host.shape());
  try {
    on_device.data<float>();
    FAIL() << "host code read device memory";
  } catch (const Error& e) {
    EXPECT_NE(e.status().message().find("is on sim:0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(on_device.mutable_data<float>(), Error);
  Tensor peer(Device{DeviceType::kSim, 1});
  peer.CopyFrom(on_device);
  Tensor back;
  back.CopyFrom(peer);
  EXPECT_EQ(std::memcmp(back.data<float>(), h, host.nbytes()), 0);
}

TEST_F(SimDeviceTest, MemoryBeyondTheCapacityIsAClearError) {
  SimDeviceOptions options;
  options.capacity_bytes = 1 << 20;
  SetSimDeviceOptions(options);
  SimDevice* sim = SimDevice::Get(3);
  EXPECT_EQ(sim->capacity_bytes(), 1 << 20);
  void* half = sim->RawAllocate(512 << 10);
  EXPECT_EQ(sim->free_bytes(), 512 << 10);
  try {
    sim->RawAllocate(768 << 10);
    FAIL() << "expected out of memory";
  } catch (const Error& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kResourceExhausted);
    EXPECT_NE(e.status().message().find("out of memory on sim:3"), std::string::npos) << e.what();
    EXPECT_NE(e.status().message().find("capacity 1.00 MiB, 512.00 KiB in use"),
              std::string::npos)
        << e.what();
  }
  sim->RawFree(half, 512 << 10);
  EXPECT_EQ(sim->free_bytes(), 1 << 20);
  Tensor t(DType::kFloat32, {1 << 19}, Device{DeviceType::kSim, 3});  // 2 MiB
  EXPECT_THROW(t.ReserveStorage(), Error);
}

// RawAllocate holds the driver lock until its device drains: a launch on any other device waits.
TEST_F(SimDeviceTest, RawAllocationDrainsItsDeviceHoldingTheDriverLock) {
  DeviceBlockGate().Close();
  FnTask blocked([&] { DeviceBlockGate().WaitInSimKernel("gate"); });
  SimDevice::Get(4)->stream(0)->Launch(&blocked);
  std::atomic<bool> allocated{false}, launched{false};
  void* ptr = nullptr;
  std::thread allocator([&] {
    ptr = SimDevice::Get(4)->RawAllocate(64);
    allocated = true;
  });
  std::this_thread::sleep_for(30ms);
  FnTask other([] {});
  std::thread launcher([&] {
    SimDevice::Get(5)->stream(0)->Launch(&other);
    launched = true;
  });
  std::this_thread::sleep_for(30ms);
  EXPECT_FALSE(allocated.load()) << "the allocation did not wait for its device to drain";
  EXPECT_FALSE(launched.load()) << "a launch elsewhere did not wait for the driver lock";
  DeviceBlockGate().Open();
  allocator.join();
  launcher.join();
  EXPECT_TRUE(allocated.load() && launched.load());
  SimDevice::Get(4)->RawFree(ptr, 64);
  SimDevice::Get(5)->stream(0)->Synchronize();

  // Switched off, the allocation goes through while the device is busy.
  SimDeviceOptions options;
  options.synchronizing_allocation = false;
  SetSimDeviceOptions(options);
  DeviceBlockGate().Close();
  SimDevice::Get(4)->stream(0)->Launch(&blocked);
  void* now = SimDevice::Get(4)->RawAllocate(64);
  SimDevice::Get(4)->RawFree(now, 64);
  DeviceBlockGate().Open();
  SimDevice::Get(4)->Synchronize();
}

Device Sim(int id) { return Device{DeviceType::kSim, id}; }

// Options that put sim devices `ids` on the card of the first (every other device on its own).
SimDeviceOptions OnOneCard(const std::vector<int>& ids) {
  SimDeviceOptions options;
  options.physical_ids.resize(*std::max_element(ids.begin(), ids.end()) + 1);
  std::iota(options.physical_ids.begin(), options.physical_ids.end(), 0);
  for (int id : ids) options.physical_ids[id] = ids.front();
  return options;
}

TEST_F(SimDeviceTest, LogicalDevicesOfOneCardShareItsCapacityAndAnErrorNamesEach) {
  SimDeviceOptions options = OnOneCard({40, 41});
  options.capacity_bytes = 1 << 20;
  SetSimDeviceOptions(options);
  SimDevice* a = SimDevice::Get(40);
  SimDevice* b = SimDevice::Get(41);
  EXPECT_EQ(b->physical_device(), Sim(40));
  EXPECT_TRUE(SharePhysicalDevice(Sim(40), Sim(41)));
  EXPECT_FALSE(SharePhysicalDevice(Sim(41), Sim(42)));
  EXPECT_EQ(b->name(), "sim:41 (physical sim GPU 40)");
  void* held = a->RawAllocate(768 << 10);
  EXPECT_EQ(b->free_bytes(), 256 << 10) << "sim:40's bytes are the card's";
  try {
    b->RawAllocate(512 << 10);
    FAIL() << "two logical devices held more than their card";
  } catch (const Error& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kResourceExhausted);
    const std::string& m = e.status().message();
    EXPECT_NE(m.find("out of memory on sim:41 (physical sim GPU 40): cannot allocate 512.00 KiB"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("capacity 1.00 MiB, 768.00 KiB in use (sim:40 768.00 KiB, sim:41 0 B)"),
              std::string::npos)
        << m;
  }
  void* rest = b->RawAllocate(256 << 10);
  EXPECT_EQ(a->stats().bytes_in_use, 768 << 10);
  EXPECT_EQ(b->stats().bytes_in_use, 256 << 10);
  b->RawFree(rest, 256 << 10);
  a->RawFree(held, 768 << 10);

  // On cards of their own (no mapping) each has the whole capacity.
  options.physical_ids.clear();
  SetSimDeviceOptions(options);
  EXPECT_FALSE(SharePhysicalDevice(Sim(40), Sim(41)));
  EXPECT_EQ(b->name(), "sim:41");
  held = a->RawAllocate(768 << 10);
  rest = b->RawAllocate(768 << 10);
  b->RawFree(rest, 768 << 10);
  a->RawFree(held, 768 << 10);
}

// cudaMalloc synchronises the whole GPU: a raw allocation on sim:42 waits for sim:43's stream when
// both are on one card, and only then.
TEST_F(SimDeviceTest, ARawAllocationDrainsEveryLogicalDeviceOfItsCard) {
  for (bool one_card : {true, false}) {
    SCOPED_TRACE(one_card ? "one card" : "two cards");
    SetSimDeviceOptions(one_card ? OnOneCard({42, 43}) : SimDeviceOptions());
    DeviceBlockGate().Close();
    FnTask blocked([] { DeviceBlockGate().WaitInSimKernel("gate"); });
    SimDevice::Get(43)->stream(0)->Launch(&blocked);
    std::atomic<bool> allocated{false};
    void* ptr = nullptr;
    std::thread allocating([&] {
      ptr = SimDevice::Get(42)->RawAllocate(64);
      allocated = true;
    });
    if (one_card) {
      std::this_thread::sleep_for(50ms);
      EXPECT_FALSE(allocated.load()) << "the allocation did not wait for sim:43 to drain";
    } else {
      for (int i = 0; i < 500 && !allocated.load(); ++i) std::this_thread::sleep_for(10ms);
      EXPECT_TRUE(allocated.load()) << "the allocation waited for another card's device";
    }
    DeviceBlockGate().Open();
    allocating.join();
    SimDevice::Get(42)->RawFree(ptr, 64);
    SimDevice::Get(43)->Synchronize();
    EXPECT_TRUE(blocked.ran.load());
  }
}

TEST_F(SimDeviceTest, WatchdogTurnsAStuckStreamIntoAnErrorAndTheDeviceRunsOn) {
  SimDeviceOptions options;
  options.watchdog = 200ms;
  SetSimDeviceOptions(options);
  DeviceBlockGate().Close();
  SimDevice* sim = SimDevice::Get(6);
  FnTask stuck([] { DeviceBlockGate().WaitInSimKernel("a peer that never comes"); }, "kernel A");
  FnTask behind([] {}, "kernel B");
  std::unique_ptr<Event> after_a = sim->CreateEvent("kernel A");
  sim->stream(0)->Launch(&stuck);
  sim->stream(0)->Record(after_a.get());
  sim->stream(0)->Launch(&behind);
  FnTask waiter([] {}, "kernel C");
  sim->stream(1)->Wait(after_a.get());
  sim->stream(1)->Launch(&waiter);
  sim->Synchronize();  // returns once the watchdog aborted the device
  EXPECT_EQ(stuck.error.code(), StatusCode::kDeadlineExceeded) << stuck.error.ToString();
  const std::string& report = stuck.error.message();
  EXPECT_NE(report.find("sim:6 stream 0: runs kernel A, which waits for a peer that never comes"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("stream 1: serves a wait for the event of kernel A"), std::string::npos)
      << report;
  EXPECT_EQ(behind.error.code(), StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(behind.ran.load());
  EXPECT_GE(sim->stats().watchdog_aborts, 1);

  DeviceBlockGate().Open();
  FnTask later([] {});
  sim->stream(0)->Launch(&later);
  sim->stream(0)->Synchronize();
  EXPECT_TRUE(later.ran.load());
  EXPECT_TRUE(later.error.ok());
}

}  // namespace
}  // namespace braid
