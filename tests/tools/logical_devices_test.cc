// Data-parallel training on two logical devices of one physical device
// (runtime/device/device_mapping.h): on sim here (SimDeviceOptions::physical_ids, as
// BRAID_SIM_DEVICES=0,0 sets them), on CUDA where the process runs with BRAID_CUDA_DEVICES=0,0
// (skipped otherwise, with the reason). The replicas train as on two devices, one step as one
// device does with the doubled batch (within what the order of float sums can make), allocate
// nothing after the first iteration, which runs on one worker, and share their card's memory:
// together they cannot hold more than it has.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/core/device_context.h"
#include "runtime/core/tensor.h"
#include "runtime/core/workspace.h"
#include "runtime/device/sim/sim_device.h"
#include "runtime/exec/dag_net.h"
#include "runtime/train/training_loop.h"
#include "testing/host_copies.h"
#include "testing/small_training.h"

namespace braid {
namespace {

DeviceOption On(DeviceType type, int id) { return DeviceToProto(Device{type, id}); }

// Puts sim devices `ids` on the card of the first while it lives; restores the options after.
class SimCard {
 public:
  explicit SimCard(const std::vector<int>& ids, int64_t capacity_bytes = 0) {
    SimDeviceOptions options = GetSimDeviceOptions();
    options.physical_ids.resize(*std::max_element(ids.begin(), ids.end()) + 1);
    std::iota(options.physical_ids.begin(), options.physical_ids.end(), 0);
    for (int id : ids) options.physical_ids[id] = ids.front();
    if (capacity_bytes > 0) options.capacity_bytes = capacity_bytes;
    SetSimDeviceOptions(options);
  }
  ~SimCard() { SetSimDeviceOptions(SimDeviceOptions()); }
};

OperatorDef* AddOp(NetDef* net, const std::string& type, const std::vector<std::string>& inputs,
                   const std::string& output) {
  OperatorDef* op = net->add_op();
  op->set_type(type);
  for (const std::string& in : inputs) op->add_input(in);
  op->add_output(output);
  return op;
}

void Fill(NetDef* init, const std::string& type, const std::string& blob,
          const std::vector<int64_t>& shape) {
  OperatorDef* op = AddOp(init, type, {}, blob);
  Argument* arg = op->add_arg();
  arg->set_name("shape");
  for (int64_t d : shape) arg->add_ints(d);
}

// data [N, 1, 12, 12] -> FC 32 -> Relu -> FC 4, no batch norm: a device's examples do not touch
// another's, so two half batches compute what one whole batch does, up to the order of sums.
NetModel Mlp() {
  NetModel m;
  m.init.set_name("mlp_init");
  m.forward.set_name("mlp");
  Fill(&m.init, "XavierFill", "fc1_w", {32, 144});
  Fill(&m.init, "ConstantFill", "fc1_b", {32});
  Fill(&m.init, "XavierFill", "fc2_w", {4, 32});
  Fill(&m.init, "ConstantFill", "fc2_b", {4});
  AddOp(&m.forward, "FC", {"data", "fc1_w", "fc1_b"}, "fc1");
  AddOp(&m.forward, "Relu", {"fc1"}, "relu1");
  AddOp(&m.forward, "FC", {"relu1", "fc2_w", "fc2_b"}, "logits");
  m.forward.add_external_output("logits");
  return m;
}

TrainingLoopOptions TrainingOn(const std::vector<DeviceOption>& devices, bool mlp) {
  TrainingLoopOptions o = SmallSyntheticTraining(devices);
  if (mlp) {
    o.net_model = Mlp();
    o.num_classes = 4;
    o.optimizer.lr.policy = "fixed";
    o.optimizer.lr.base_lr = 0.05f;
  }
  return o;
}

std::string Bits(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// Every trained parameter of replica `d`, on the host, by its unscoped name.
std::map<std::string, std::vector<float>> Params(const TrainingLoop& loop, int d) {
  std::map<std::string, std::vector<float>> params;
  for (const ParamInfo& p : loop.nets().params.params) {
    if (!p.trainable()) continue;
    params[p.name] = HostFloats(*loop.workspace().GetBlob(loop.nets().OnDevice(d, p.name)));
  }
  return params;
}

// One step of the MLP on `pair` (two logical devices of one card, 8 examples each) and on `one`
// (16 examples) from the same weights. The loss is the mean of 16 per-example losses either way:
// the mean of two means of 8 adds in another order, and a GEMM blocked for 8 rows may round a
// logit differently than one for 16: a few ulps, far inside 1e-5 of it. The gradients are the
// same sums over 16 examples in another order (two means of 8, averaged by the Allreduce), so
// the updated weights differ by a few ulps of the update: within 1e-4 of each blob's largest
// update, plus 4 ulps of the weight for the rounding of w - update. One step: nothing amplifies.
void ExpectOneStepLikeOneDeviceWithTheDoubledBatch(const std::vector<DeviceOption>& pair,
                                                   const DeviceOption& one) {
  TrainingLoop two_devices(TrainingOn(pair, /*mlp=*/true));
  TrainingLoop one_device(TrainingOn({one}, /*mlp=*/true));
  const auto before = Params(one_device, 0);
  ASSERT_FALSE(before.empty());
  for (const auto& [name, values] : Params(two_devices, 0)) {
    ASSERT_EQ(Bits(values), Bits(before.at(name))) << name << ": not the same initial weights";
  }
  const float loss_two = two_devices.Step();
  const float loss_one = one_device.Step();
  EXPECT_NEAR(loss_two, loss_one, 1e-5f * std::abs(loss_one));
  const auto after_one = Params(one_device, 0);
  const auto after_two = Params(two_devices, 0);
  const auto after_two_replica1 = Params(two_devices, 1);
  for (const auto& [name, expected] : after_one) {
    const std::vector<float>& got = after_two.at(name);
    ASSERT_EQ(got.size(), expected.size()) << name;
    EXPECT_EQ(Bits(after_two_replica1.at(name)), Bits(got)) << name << ": replicas differ";
    float largest_update = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      largest_update = std::max(largest_update, std::abs(expected[i] - before.at(name)[i]));
    }
    EXPECT_GT(largest_update, 0.f) << name << " did not train";
    for (size_t i = 0; i < expected.size(); ++i) {
      const float bound = 1e-4f * largest_update +
                          4 * std::numeric_limits<float>::epsilon() * std::abs(expected[i]);
      ASSERT_LE(std::abs(got[i] - expected[i]), bound)
          << name << "[" << i << "]: " << got[i] << " vs " << expected[i];
    }
  }
}

int64_t RawAllocations(const DeviceOption& device) {
  return GetDeviceContext(DeviceFromProto(device))->allocator()->stats().raw_allocations;
}

// ResNet-20 on `pair`: its first iteration runs on one worker (the net holds collectives), and
// no device allocates after it.
void ExpectNothingAllocatedAfterTheFirstIteration(const std::vector<DeviceOption>& pair) {
  TrainingLoop loop(TrainingOn(pair, /*mlp=*/false));
  const auto* dag = dynamic_cast<const DagNet*>(&loop.train_net());
  ASSERT_NE(dag, nullptr);
  EXPECT_TRUE(dag->first_iter_only_one_worker());
  loop.Step();
  const int64_t before0 = RawAllocations(pair[0]), before1 = RawAllocations(pair[1]);
  for (int i = 0; i < 3; ++i) loop.Step();
  EXPECT_EQ(RawAllocations(pair[0]), before0);
  EXPECT_EQ(RawAllocations(pair[1]), before1);
}

class LogicalSimDevicesTest : public ::testing::Test {
 protected:
  void TearDown() override { SetSimDeviceOptions(SimDeviceOptions()); }
};

// The mapping changes where memory is counted and what a raw call drains, never a result.
TEST_F(LogicalSimDevicesTest, TwoLogicalDevicesOfOneCardTrainToTheBitsOfTwoCards) {
  const std::vector<DeviceOption> pair = {On(DeviceType::kSim, 0), On(DeviceType::kSim, 1)};
  TrainingLoop two_cards(TrainingOn(pair, /*mlp=*/false));
  std::vector<float> losses;
  for (int step = 0; step < 3; ++step) losses.push_back(two_cards.Step());
  SimCard card({0, 1});
  ASSERT_TRUE(SharePhysicalDevice(Device{DeviceType::kSim, 0}, Device{DeviceType::kSim, 1}));
  TrainingLoop one_card(TrainingOn(pair, /*mlp=*/false));
  for (int step = 0; step < 3; ++step) EXPECT_EQ(one_card.Step(), losses[step]) << "step " << step;
  for (const std::string& blob : two_cards.nets().CheckpointBlobs()) {
    const Tensor* a = one_card.workspace().GetBlob(blob);
    const Tensor* b = two_cards.workspace().GetBlob(blob);
    Tensor ha, hb;
    ha.CopyFrom(*a);
    hb.CopyFrom(*b);
    ASSERT_EQ(ha.nbytes(), hb.nbytes()) << blob;
    EXPECT_EQ(std::memcmp(ha.raw_data(), hb.raw_data(), ha.nbytes()), 0) << blob;
  }
}

TEST_F(LogicalSimDevicesTest, TwoLogicalDevicesTrainOneStepLikeOneDeviceWithTheDoubledBatch) {
  SimCard card({0, 1});
  ExpectOneStepLikeOneDeviceWithTheDoubledBatch(
      {On(DeviceType::kSim, 0), On(DeviceType::kSim, 1)}, On(DeviceType::kSim, 0));
}

TEST_F(LogicalSimDevicesTest, TwoLogicalDevicesAllocateNothingAfterTheFirstIteration) {
  SimCard card({0, 1});
  ExpectNothingAllocatedAfterTheFirstIteration({On(DeviceType::kSim, 0), On(DeviceType::kSim, 1)});
}

// sim:44 and sim:45 train on cards of their own; sim:46 and sim:47, the same run on one card
// with less than the two needed together, run out of memory, and the error names both.
TEST_F(LogicalSimDevicesTest, TwoLogicalDevicesCannotTogetherHoldMoreThanTheirCard) {
  auto train = [](int first) {
    return StatusFromCall([&] {
      TrainingLoop loop(TrainingOn({On(DeviceType::kSim, first), On(DeviceType::kSim, first + 1)},
                            /*mlp=*/true));
      loop.Step();
      loop.Step();
    });
  };
  ASSERT_TRUE(train(44).ok());
  const int64_t peak0 = SimDevice::Get(44)->stats().peak_bytes_in_use;
  const int64_t peak1 = SimDevice::Get(45)->stats().peak_bytes_in_use;
  const int64_t capacity = std::max(peak0, peak1) + std::min(peak0, peak1) / 4;
  std::cout << "peaks " << peak0 << " and " << peak1 << " bytes; card of " << capacity << "\n";
  SimCard card({46, 47}, capacity);
  const Status s = train(46);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.message().find("(physical sim GPU 46)"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("in use (sim:46 "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(", sim:47 "), std::string::npos) << s.message();
}

// Why cuda:0 and cuda:1 are not two logical GPUs of one GPU ("" when they are).
std::string NotTwoLogicalGpus() {
  for (int id : {0, 1}) {
    const Status s = StatusFromCall([&] { GetDeviceContext(Device{DeviceType::kCuda, id}); });
    if (!s.ok()) return s.message();
  }
  if (!SharePhysicalDevice(Device{DeviceType::kCuda, 0}, Device{DeviceType::kCuda, 1})) {
    return "cuda:0 and cuda:1 are distinct GPUs (run with BRAID_CUDA_DEVICES=0,0)";
  }
  return "";
}

// The acceptance run (tools/gpu/acceptance.sh) runs this with BRAID_CUDA_DEVICES=0,0: the
// replicas' Allreduces then use braid's device-side all-reduce (NCCL refuses two ranks on one
// GPU), with real CUDA kernels, streams, caching allocators and device locks.
TEST(CudaTrainingTest, TwoLogicalGpusOnOnePhysicalGpuTrainLikeOneGpuWithTheDoubledBatch) {
  if (const std::string why = NotTwoLogicalGpus(); !why.empty()) {
    GTEST_SKIP() << "needs two logical GPUs on one: " << why;
  }
  const std::vector<DeviceOption> pair = {On(DeviceType::kCuda, 0), On(DeviceType::kCuda, 1)};
  ExpectOneStepLikeOneDeviceWithTheDoubledBatch(pair, On(DeviceType::kCuda, 0));
  ExpectNothingAllocatedAfterTheFirstIteration(pair);
}

}  // namespace
}  // namespace braid
