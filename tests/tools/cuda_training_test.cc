// Data-parallel training on CUDA GPUs (TrainingLoop with --devices cuda:0,cuda:1) against the same
// training on cpu devices: both start from the same weights (filled on the host), the losses and
// every parameter agree within fp32 tolerance (cuDNN and cuBLAS sum in other orders than oneDNN
// and OpenBLAS, so not bit for bit), everything but the reader runs on the GPUs, and nothing is
// allocated on them after the first iteration. Each test skips, with CUDA's error, where the
// machine has fewer GPUs than it needs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "braid/status.h"
#include "runtime/core/device_context.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/tensor.h"
#include "runtime/core/workspace.h"
#include "runtime/models/data_parallel.h"
#include "runtime/models/training_footprint.h"
#include "runtime/train/training_loop.h"
#include "testing/host_copies.h"
#include "testing/small_training.h"

namespace braid {
namespace {

// Why the machine cannot give `gpus` CUDA devices ("" when it can).
std::string MissingGpus(int gpus) {
  for (int id = 0; id < gpus; ++id) {
    const Status usable = StatusFromCall([&] { GetDeviceContext(Device{DeviceType::kCuda, id}); });
    if (!usable.ok()) return usable.message();
  }
  return "";
}

#define BRAID_REQUIRE_GPUS(n)                                                  \
  if (const std::string why = MissingGpus(n); !why.empty()) {                  \
    GTEST_SKIP() << "needs " << (n) << " GPU(s): " << why;                     \
  }

TrainingLoopOptions TrainingOn(DeviceType type, int devices) {
  std::vector<DeviceOption> on;
  for (int id = 0; id < devices; ++id) on.push_back(DeviceToProto(Device{type, id}));
  return SmallSyntheticTraining(on);
}

// Trains cpu and cuda devices 4 steps from the same initial weights, the random fills having run
// on the host for both (init_on_host; checked bit for bit before the first step), on the same
// batches. Bounds:
//   step 1's loss: one forward pass from identical weights and data, which cuDNN and oneDNN sum
//     in other orders in float: rounding only, within 1e-4 relative (the pass has ~20 layers, each
//     adding a few ulps, ~1e-6, of relative error);
//   steps 2-4 and the parameters after them: each update carries the gradients' rounding
//     differences (float sums in other orders, ~1e-5 relative); four steps at lr <= 0.1 with
//     momentum 0.9 move a parameter by a few lr |g|, so the differences stay within 1e-3 of the
//     loss and of each blob's largest magnitude. Four steps, not more: over a long trajectory
//     rounding differences grow chaotically (STYLE.md), which the acceptance run's loss curves
//     show instead of a test.
void ExpectCloseTraining(int devices) {
  TrainingLoopOptions cpu_options = TrainingOn(DeviceType::kCpu, devices);
  TrainingLoopOptions gpu_options = TrainingOn(DeviceType::kCuda, devices);
  cpu_options.init_on_host = gpu_options.init_on_host = true;
  TrainingLoop cpu(cpu_options);
  TrainingLoop gpu(gpu_options);
  const std::vector<std::string> blobs = cpu.nets().CheckpointBlobs();
  ASSERT_EQ(blobs, gpu.nets().CheckpointBlobs());
  for (const std::string& blob : blobs) {
    ASSERT_EQ(HostBytes(*gpu.workspace().GetBlob(blob)), HostBytes(*cpu.workspace().GetBlob(blob)))
        << blob << " starts from other values";
  }
  for (int step = 0; step < 4; ++step) {
    const float want = cpu.Step();
    EXPECT_NEAR(gpu.Step(), want, (step == 0 ? 1e-4 : 1e-3) * std::abs(want)) << "step " << step;
  }
  for (const std::string& blob : blobs) {
    const Tensor* on_gpu = gpu.workspace().GetBlob(blob);
    if (on_gpu->dtype() != DType::kFloat32) continue;
    const std::vector<float> g = HostFloats(*on_gpu);
    const std::vector<float> c = HostFloats(*cpu.workspace().GetBlob(blob));
    ASSERT_EQ(g.size(), c.size()) << blob;
    float scale = 1e-6f, worst = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      scale = std::max(scale, std::abs(c[i]));
      worst = std::max(worst, std::abs(g[i] - c[i]));
    }
    EXPECT_LE(worst, 1e-3f * scale) << blob;
  }
}

// Runs without a GPU: the nets braid_train builds for cuda:0,cuda:1 are all CUDA kernels but
// the readers, in plain layouts (the CUDA kernels read no blocked tensor), with an Allreduce per
// parameter gradient.
TEST(CudaTrainingTest, TheDataParallelNetsForTwoGpusHaveACudaKernelForEveryOp) {
#ifndef BRAID_WITH_CUDA
  GTEST_SKIP() << "braid is built without the CUDA backend (BRAID_CUDA=OFF or no toolkit)";
#endif
  FootprintModel model;
  model.device = DeviceToProto(Device{DeviceType::kCuda, 0});
  model.batch = 16;
  const TrainingNets nets =
      ReplicateForDevices(BuildFootprintNets(model), {DeviceToProto(Device{DeviceType::kCuda, 0}),
                                                      DeviceToProto(Device{DeviceType::kCuda, 1})});
  int allreduces = 0;
  for (const NetDef* net : {&nets.params.init_net, &nets.train, &nets.test}) {
    for (const OperatorDef& op : net->op()) {
      const Device device = DeviceFromProto(op.device_option());
      const std::string label = net->name() + ": " + op.type() + " '" + op.name() + "'";
      if (device.is_host()) {
        EXPECT_TRUE(FindSchema(op.type())->host_only() || op.type() == "Split") << label;
        continue;
      }
      EXPECT_EQ(device.type, DeviceType::kCuda) << label;
      EXPECT_TRUE(HasKernel(op.type(), DeviceType::kCuda)) << label;
      for (const Argument& arg : op.arg()) EXPECT_NE(arg.name(), kBlockedOutputsArg) << label;
      allreduces += op.type() == "Allreduce";
    }
  }
  EXPECT_GT(allreduces, 0);
}

TEST(CudaTrainingTest, OneGpuTrainsCloseToTheCpu) {
  BRAID_REQUIRE_GPUS(1);
  ExpectCloseTraining(1);
}

TEST(CudaTrainingTest, TwoGpusTrainCloseToTwoCpuDevices) {
  BRAID_REQUIRE_GPUS(2);
  ExpectCloseTraining(2);
}

TEST(CudaTrainingTest, OnlyTheReaderIsOnTheHost) {
  BRAID_REQUIRE_GPUS(1);
  TrainingLoop gpu(TrainingOn(DeviceType::kCuda, 1));
  for (const OperatorDef& op : gpu.nets().train.op()) {
    const Device device = DeviceFromProto(op.device_option());
    if (op.type() == "IdxImageInput" || op.type() == "Split") continue;
    EXPECT_EQ(device.type, DeviceType::kCuda) << op.type() << " '" << op.name() << "'";
  }
}

TEST(CudaTrainingTest, TheGpusAllocateNothingAfterTheFirstIteration) {
  BRAID_REQUIRE_GPUS(2);
  TrainingLoop gpu(TrainingOn(DeviceType::kCuda, 2));
  gpu.Step();
  Allocator* a0 = GetDeviceContext(Device{DeviceType::kCuda, 0})->allocator();
  Allocator* a1 = GetDeviceContext(Device{DeviceType::kCuda, 1})->allocator();
  const int64_t before0 = a0->stats().raw_allocations;
  const int64_t before1 = a1->stats().raw_allocations;
  for (int i = 0; i < 3; ++i) gpu.Step();
  EXPECT_EQ(a0->stats().raw_allocations, before0);
  EXPECT_EQ(a1->stats().raw_allocations, before1);
}

}  // namespace
}  // namespace braid
