// Collectives on sim devices (runtime/device/collective.h): rank kernels block their streams until
// every rank has arrived, a failed rank releases its peers with its error, and an Allreduce
// launched by a net runs one rank kernel per device that sums bit-identically to the cpu devices'
// single pass, on logical devices of one card too (whose device lock is the card's).
#include "runtime/device/collective.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>

#include "runtime/core/workspace.h"
#include "runtime/device/device_lock.h"
#include "runtime/device/sim/sim_device.h"
#include "runtime/exec/net.h"
#include "testing/net_text.h"

namespace braid {
namespace {

// Rank `rank`'s kernel: arrives at one barrier of `peers`, then counts itself done.
class RankKernel final : public KernelTask {
 public:
  RankKernel(CollectiveRendezvous* peers, int rank) : peers_(peers), rank_(rank) {}
  void Execute() override {
    try {
      peers_->Arrive(rank_, "test");
      done = true;
    } catch (const Error& e) {
      error = e.status();
    }
  }
  void Abandon(const Status& why) override { error = why; }
  std::string Describe() const override { return "rank " + std::to_string(rank_); }

  std::atomic<bool> done{false};
  Status error;  // written by the stream thread, read after Synchronize

 private:
  CollectiveRendezvous* const peers_;
  const int rank_;
};

Device Sim(int id) { return Device{DeviceType::kSim, id}; }

TEST(CollectiveTest, ARankKernelBlocksItsStreamUntilEveryRankHasArrived) {
  CollectiveRendezvous peers("test collective", {Sim(30), Sim(31)});
  RankKernel first(&peers, 0), second(&peers, 1);
  Stream* s0 = SimDevice::Get(30)->stream(0);
  Stream* s1 = SimDevice::Get(31)->stream(0);
  std::unique_ptr<Event> after_first = SimDevice::Get(30)->CreateEvent("after rank 0");
  s0->Launch(&first);
  s0->Record(after_first.get());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(first.done) << "rank 0 finished without rank 1";
  EXPECT_FALSE(after_first->Query()) << "work behind rank 0 on its stream ran";
  s1->Launch(&second);
  s0->Synchronize();
  s1->Synchronize();
  EXPECT_TRUE(first.done);
  EXPECT_TRUE(second.done);
}

TEST(CollectiveTest, AFailedRankReleasesItsWaitingPeersWithItsError) {
  CollectiveRendezvous peers("test collective", {Sim(30), Sim(31)});
  RankKernel waiting(&peers, 0);
  Stream* s0 = SimDevice::Get(30)->stream(0);
  s0->Launch(&waiting);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  peers.Fail(Status::Internal("rank 1 on sim:31 failed"));
  s0->Synchronize();
  EXPECT_FALSE(waiting.done);
  EXPECT_EQ(waiting.error.message(), "rank 1 on sim:31 failed");
  peers.Reset();  // the next run starts clean
  RankKernel again0(&peers, 0), again1(&peers, 1);
  s0->Launch(&again0);
  SimDevice::Get(31)->stream(0)->Launch(&again1);
  s0->Synchronize();
  SimDevice::Get(31)->stream(0)->Synchronize();
  EXPECT_TRUE(again0.done && again1.done);
}

// Allreduce over `devices` (one GaussianFill input each, summed in place), returns each device's
// result as bytes.
std::vector<std::string> AllreduceOn(const std::vector<Device>& devices, const std::string& type) {
  NetDef net;
  net.set_name("allreduce");
  net.set_type(type);
  OperatorDef* allreduce = nullptr;
  for (size_t d = 0; d < devices.size(); ++d) {
    OperatorDef* fill = net.add_op();
    fill->set_type("GaussianFill");
    fill->add_output("x" + std::to_string(d));
    Argument* shape = fill->add_arg();
    shape->set_name("shape");
    shape->add_ints(1000);
    shape->add_ints(37);
    Argument* seed = fill->add_arg();
    seed->set_name("seed");
    seed->set_i(static_cast<int64_t>(d) + 1);
    *fill->mutable_device_option() = DeviceToProto(devices[d]);
  }
  allreduce = net.add_op();
  allreduce->set_type("Allreduce");
  allreduce->set_name("sum");
  for (size_t d = 0; d < devices.size(); ++d) {
    allreduce->add_input("x" + std::to_string(d));
    allreduce->add_output("x" + std::to_string(d));
  }
  *allreduce->mutable_device_option() = DeviceToProto(devices[0]);
  Workspace ws;
  Net* n = ws.CreateNet(net);
  const Device& last = devices.back();
  const int64_t launched = last.is_host() ? 0 : SimDevice::Get(last.id)->stats().kernels_launched;
  for (int run = 0; run < 3; ++run) EXPECT_TRUE(n->Run().ok());
  if (!last.is_host()) {  // its fill and its own rank of the Allreduce, each run
    EXPECT_EQ(SimDevice::Get(last.id)->stats().kernels_launched - launched, 3 * 2);
  }
  std::vector<std::string> out;
  for (size_t d = 0; d < devices.size(); ++d) {
    Tensor host;
    host.CopyFrom(*ws.GetBlob("x" + std::to_string(d)));
    out.emplace_back(static_cast<const char*>(host.raw_data()), host.nbytes());
  }
  return out;
}

TEST(CollectiveTest, AnAllreduceOfRankKernelsSumsToTheBitsOfTheCpuPass) {
  for (const char* type : {"simple", "dag"}) {
    const std::vector<std::string> cpu = AllreduceOn({Device{}, Device{DeviceType::kCpu, 1},
                                                      Device{DeviceType::kCpu, 2}},
                                                     type);
    const std::vector<std::string> sim = AllreduceOn({Sim(30), Sim(31), Sim(32)}, type);
    ASSERT_EQ(sim.size(), 3u);
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(sim[d], cpu[d]) << type << " device " << d;
      EXPECT_EQ(sim[d], sim[0]) << type << ": every device holds the sum";
    }
  }
}

// Puts sim devices `ids` on the card of the first while it lives.
class OnOneCard {
 public:
  explicit OnOneCard(const std::vector<int>& ids) {
    SimDeviceOptions options = GetSimDeviceOptions();
    options.physical_ids.resize(*std::max_element(ids.begin(), ids.end()) + 1);
    std::iota(options.physical_ids.begin(), options.physical_ids.end(), 0);
    for (int id : ids) options.physical_ids[id] = ids.front();
    SetSimDeviceOptions(options);
  }
  ~OnOneCard() {
    SimDeviceOptions options = GetSimDeviceOptions();
    options.physical_ids.clear();
    SetSimDeviceOptions(options);
  }
};

TEST(CollectiveTest, AnAllreduceOverLogicalDevicesOfOneCardSumsToTheBitsOfTheCpuPass) {
  OnOneCard card({33, 34, 35});
  EXPECT_EQ(PhysicalDevice(Sim(35)), Sim(33));
  CollectiveEngine engine = CollectiveEngine::kNccl;
  ASSERT_TRUE(ChooseCollectiveEngine({Sim(33), Sim(34), Sim(35)}, &engine).ok());
  EXPECT_EQ(engine, CollectiveEngine::kRankKernels);
  for (const char* type : {"simple", "dag"}) {
    const std::vector<std::string> cpu = AllreduceOn({Device{}, Device{DeviceType::kCpu, 1},
                                                      Device{DeviceType::kCpu, 2}},
                                                     type);
    const std::vector<std::string> sim = AllreduceOn({Sim(33), Sim(34), Sim(35)}, type);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(sim[d], cpu[d]) << type << " device " << d;
  }
}

// A raw call on one logical device drains its whole card, so the card has one device lock.
TEST(CollectiveTest, LogicalDevicesOfOneCardShareOneDeviceLock) {
  OnOneCard card({36, 37});
  std::unique_lock<std::mutex> held = LockDevice(Sim(36));
  std::atomic<bool> locked{false};
  std::thread other([&] {
    std::unique_lock<std::mutex> lock = LockDevice(Sim(37));
    locked = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(locked.load()) << "sim:37 took a lock of its own while sim:36's card was locked";
  held.unlock();
  other.join();
  EXPECT_TRUE(locked.load());
  DevicesLock both({Sim(37), Sim(36), Sim(38)});  // the card's lock once: no self-deadlock
}

}  // namespace
}  // namespace braid
