// The footprint predicted before a run (runtime/models/training_footprint.h) is what the caching
// allocator of a sim device holds once the TrainingLoop has trained and evaluated with a memory plan.
#include "runtime/models/training_footprint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "runtime/device/caching_allocator.h"
#include "runtime/device/sim/sim_device.h"
#include "runtime/train/training_loop.h"

namespace braid {
namespace {

// Each test has a sim device of its own (no other test of this binary uses sim:5 or sim:6), so
// the peaks are its own when the tests share a process.
TrainingLoopOptions SmallSimRun(int device, int64_t batch, int64_t test_batch) {
  TrainingLoopOptions o;
  o.model = "resnet20";
  o.data = "synthetic";
  o.synthetic_examples = 64;
  o.synthetic_test_examples = 64;
  o.image_size = 16;
  o.batch_size = batch;
  o.test_batch_size = test_batch;
  o.iters = 2;
  o.devices = {DeviceToProto(Device{DeviceType::kSim, device})};
  o.memory_plan = true;
  return o;
}

double RelativeError(int64_t predicted, int64_t measured) {
  return std::abs(static_cast<double>(predicted - measured)) / static_cast<double>(measured);
}

// Trains two steps and evaluates once; the prediction, made from the trainer's nets before it
// ran, must be within 2% of the device's peak reserved bytes and of its raw peak.
void ExpectPredictionMatchesPeak(int device, int64_t batch, int64_t test_batch) {
  TrainingLoop trainer(SmallSimRun(device, batch, test_batch));
  const std::vector<DeviceFootprint> predicted = PredictTrainingFootprint(trainer.nets(), {});
  ASSERT_EQ(predicted.size(), 1u);
  const DeviceFootprint& f = predicted[0];
  EXPECT_EQ(f.unsized_blobs, 0);
  trainer.Step();
  trainer.Step();
  trainer.Evaluate();
  const Device sim{DeviceType::kSim, device};
  const int64_t reserved = CachingAllocatorOf(sim)->stats().peak_bytes_reserved;
  const int64_t raw = SimDevice::Get(device)->stats().peak_bytes_in_use;
  std::printf("test batch %lld: predicted %lld B (arena %lld, growth %lld, cached %lld, params %lld, "
              "momentum %lld, other %lld, rounding %lld, %lld small segments); allocator peak "
              "reserved %lld B, device raw peak %lld B\n",
              static_cast<long long>(test_batch), static_cast<long long>(f.total_bytes()),
              static_cast<long long>(f.arena), static_cast<long long>(f.test_growth),
              static_cast<long long>(f.cached),
              static_cast<long long>(f.parameters), static_cast<long long>(f.momentum),
              static_cast<long long>(f.other), static_cast<long long>(f.rounding),
              static_cast<long long>(f.small_segments), static_cast<long long>(reserved),
              static_cast<long long>(raw));
  EXPECT_EQ(f.test_growth > 0, test_batch > batch);
  EXPECT_FALSE(f.workspace_on_device);  // sim: oneDNN scratchpads are host memory
  EXPECT_LE(RelativeError(f.total_bytes(), reserved), 0.02);
  EXPECT_LE(RelativeError(f.total_bytes(), raw), 0.02);
}

TEST(TrainingFootprintTest, PredictsTheSimAllocatorsPeakWhenTheTestNetFitsTheArena) {
  ExpectPredictionMatchesPeak(5, /*batch=*/32, /*test_batch=*/16);
}

TEST(TrainingFootprintTest, PredictsTheSimAllocatorsPeakWhenTheTestNetGrowsTheArena) {
  // A test batch 8 times the training batch: the shared arena grows to the test net's size, and
  // the train net's old arena stays cached.
  ExpectPredictionMatchesPeak(6, /*batch=*/8, /*test_batch=*/64);
}

}  // namespace
}  // namespace braid
