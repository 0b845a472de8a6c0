// Data-parallel training on simulated GPUs (TrainingLoop with --devices sim:0,sim:1): the same
// parameters, bit for bit, as on cpu:0,cpu:1 with the same threads, from initial values filled on
// the host; everything but the reader on the devices; nothing allocated on them after the first
// iteration; checkpoints through the host.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "runtime/core/tensor.h"
#include "runtime/core/workspace.h"
#include "runtime/device/sim/sim_device.h"
#include "runtime/models/host_fills.h"
#include "runtime/train/training_loop.h"
#include "testing/host_copies.h"
#include "testing/small_training.h"

namespace braid {
namespace {

DeviceOption On(DeviceType type, int id) { return DeviceToProto(Device{type, id}); }

TrainingLoopOptions TwoDeviceRun(DeviceType type, const std::string& executor) {
  TrainingLoopOptions o = SmallSyntheticTraining({On(type, 0), On(type, 1)});
  o.executor = executor;
  return o;
}

// Trains `cpu` and `sim` (the same options on cpu and on sim devices) 4 steps; the losses and
// every checkpoint blob must agree bit for bit.
void ExpectSameTraining(const TrainingLoopOptions& cpu_options, const TrainingLoopOptions& sim_options) {
  TrainingLoop cpu(cpu_options);
  TrainingLoop sim(sim_options);
  for (int step = 0; step < 4; ++step) EXPECT_EQ(sim.Step(), cpu.Step()) << "step " << step;
  const std::vector<std::string> cpu_blobs = cpu.nets().CheckpointBlobs();
  const std::vector<std::string> sim_blobs = sim.nets().CheckpointBlobs();
  ASSERT_EQ(cpu_blobs.size(), sim_blobs.size());
  for (size_t i = 0; i < cpu_blobs.size(); ++i) {
    const Tensor* on_sim = sim.workspace().GetBlob(sim_blobs[i]);
    ASSERT_EQ(on_sim->device().type, DeviceType::kSim) << sim_blobs[i];
    ASSERT_EQ(HostBytes(*on_sim), HostBytes(*cpu.workspace().GetBlob(cpu_blobs[i])))
        << sim_blobs[i];
  }
}

TEST(SimTrainingTest, SimDevicesTrainToTheBitsOfCpuDevices) {
  for (const char* executor : {"simple", "dag"}) {
    for (size_t devices : {1, 2}) {
      SCOPED_TRACE(std::string(executor) + ", " + std::to_string(devices) + " device(s)");
      TrainingLoopOptions cpu_options = TwoDeviceRun(DeviceType::kCpu, executor);
      TrainingLoopOptions sim_options = TwoDeviceRun(DeviceType::kSim, executor);
      cpu_options.devices.resize(devices);
      sim_options.devices.resize(devices);
      if (std::string(executor) == "simple" && devices == 2) {
        // The simple executor runs cpu:0 and cpu:1 ops one at a time (full teams), while sim
        // replicas run side by side on their streams (half teams); oneDNN's bits may depend on
        // the team (they do on AVX2 EPYC machines), so both get one thread per op here.
        cpu_options.intra_op_threads = sim_options.intra_op_threads = 1;
      }
      ExpectSameTraining(cpu_options, sim_options);
    }
  }
}

// Parameters start from the cpu run's values, because the random fills ran on the host
// (runtime/models/host_fills.h). sim runs the CPU kernels, so the values alone cannot show where
// the fills ran: the init net must also have every random fill on the host, the way a cuda run
// (whose fills would draw from cuRAND) gets the cpu's weights.
TEST(SimTrainingTest, ParametersStartFromTheCpusValuesFilledOnTheHost) {
  for (size_t devices : {1, 2}) {
    SCOPED_TRACE(std::to_string(devices) + " device(s)");
    TrainingLoopOptions cpu_options = TwoDeviceRun(DeviceType::kCpu, "simple");
    TrainingLoopOptions sim_options = TwoDeviceRun(DeviceType::kSim, "simple");
    cpu_options.devices.resize(devices);
    sim_options.devices.resize(devices);
    TrainingLoop cpu(cpu_options);
    TrainingLoop sim(sim_options);
    int host_fills = 0;
    for (const OperatorDef& op : sim.nets().params.init_net.op()) {
      if (!IsRandomFill(op.type())) continue;
      EXPECT_TRUE(DeviceFromProto(op.device_option()).is_host()) << op.ShortDebugString();
      EXPECT_EQ(op.output(0).rfind("host/", 0), 0u) << op.output(0);
      EXPECT_FALSE(sim.workspace().GetBlob(op.output(0))->has_storage()) << "freed after init";
      ++host_fills;
    }
    EXPECT_GT(host_fills, 0);
    const std::vector<std::string> cpu_blobs = cpu.nets().CheckpointBlobs();
    const std::vector<std::string> sim_blobs = sim.nets().CheckpointBlobs();
    ASSERT_EQ(cpu_blobs.size(), sim_blobs.size());
    for (size_t i = 0; i < cpu_blobs.size(); ++i) {
      const Tensor* on_sim = sim.workspace().GetBlob(sim_blobs[i]);
      EXPECT_EQ(on_sim->device().type, DeviceType::kSim) << sim_blobs[i];
      EXPECT_EQ(HostBytes(*on_sim), HostBytes(*cpu.workspace().GetBlob(cpu_blobs[i])))
          << sim_blobs[i];
    }
  }
}

TEST(SimTrainingTest, WithoutInitOnHostTheDevicesFillTheirOwnParameters) {
  TrainingLoopOptions options = TwoDeviceRun(DeviceType::kSim, "simple");
  options.init_on_host = false;
  TrainingLoop sim(options);
  int device_fills = 0;
  for (const OperatorDef& op : sim.nets().params.init_net.op()) {
    if (!IsRandomFill(op.type())) continue;
    EXPECT_EQ(DeviceFromProto(op.device_option()), (Device{DeviceType::kSim, 0}));
    ++device_fills;
  }
  EXPECT_GT(device_fills, 0);
}

TEST(SimTrainingTest, OnlyTheReaderIsOnTheHostAndArenasAreOnTheDevices) {
  TrainingLoop sim(TwoDeviceRun(DeviceType::kSim, "dag"));
  for (const OperatorDef& op : sim.nets().train.op()) {
    const Device device = DeviceFromProto(op.device_option());
    const bool host_op = op.type() == "IdxImageInput" || op.type() == "Split";
    EXPECT_EQ(device.is_host(), host_op) << op.ShortDebugString();
  }
  int device_arenas = 0;
  for (const ArenaPlan& arena : sim.train_memory()->plan().arenas) {
    device_arenas += DeviceFromProto(arena.device).type == DeviceType::kSim;
  }
  EXPECT_EQ(device_arenas, 2);
  EXPECT_EQ(sim.workspace().GetBlob("sim_1/data")->device(), (Device{DeviceType::kSim, 1}));
  EXPECT_TRUE(sim.workspace().GetBlob("sim_1/data_host")->device().is_host());
}

TEST(SimTrainingTest, TheDevicesAllocateNothingAfterTheFirstIteration) {
  TrainingLoop sim(TwoDeviceRun(DeviceType::kSim, "dag"));
  sim.Step();
  const int64_t before0 = SimDevice::Get(0)->stats().raw_allocations;
  const int64_t before1 = SimDevice::Get(1)->stats().raw_allocations;
  for (int i = 0; i < 3; ++i) sim.Step();
  EXPECT_EQ(SimDevice::Get(0)->stats().raw_allocations, before0);
  EXPECT_EQ(SimDevice::Get(1)->stats().raw_allocations, before1);
}

TEST(SimTrainingTest, ACheckpointOfDeviceBlobsResumesToTheSameBits) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "braid_sim_training_test.pb").string();
  TrainingLoopOptions options = TwoDeviceRun(DeviceType::kSim, "simple");
  options.checkpoint = path;
  TrainingLoop first(options);
  first.Step();
  first.Step();
  first.SaveCheckpoint(path);
  options.resume = true;
  TrainingLoop resumed(options);
  EXPECT_EQ(resumed.iteration(), 2);
  for (const std::string& blob : first.nets().CheckpointBlobs()) {
    EXPECT_EQ(HostBytes(*resumed.workspace().GetBlob(blob)),
              HostBytes(*first.workspace().GetBlob(blob)))
        << blob;
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace braid
