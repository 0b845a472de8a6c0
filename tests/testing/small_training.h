// The small training run the tools tests share: ResNet-20 on 64 synthetic images of 1x12x12 (32 for
// the test set), batch 16 (test batch 16), 4 iterations, a memory plan, the dag executor with 2
// workers, on `devices`. Tests change what they exercise from there:
//
//   TrainingLoopOptions o = SmallSyntheticTraining({Cpu(0), Cpu(1)});
//   o.iters = 6;
//   TrainingLoop loop(o);
//
// SmallPlainTraining is the same run on one cpu device with the simple executor and no memory
// plan (every blob stays readable after a step), 96 + 48 images, a fixed learning rate of 0.05
// and the seed `seed`.
#ifndef BRAID_TESTS_TESTING_SMALL_TRAINING_H_
#define BRAID_TESTS_TESTING_SMALL_TRAINING_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/train/training_loop.h"

namespace braid {

inline TrainingLoopOptions SmallSyntheticTraining(std::vector<DeviceOption> devices) {
  TrainingLoopOptions o;
  o.model = "resnet20";
  o.data = "synthetic";
  o.synthetic_examples = 64;
  o.synthetic_test_examples = 32;
  o.image_size = 12;
  o.batch_size = 16;
  o.test_batch_size = 16;
  o.iters = 4;
  o.devices = std::move(devices);
  o.memory_plan = true;
  o.executor = "dag";
  o.threads = 2;
  return o;
}

inline TrainingLoopOptions SmallPlainTraining(uint64_t seed) {
  TrainingLoopOptions o = SmallSyntheticTraining({DeviceOption()});
  o.synthetic_examples = 96;
  o.synthetic_test_examples = 48;
  o.memory_plan = false;
  o.executor = "simple";
  o.threads = 0;
  o.optimizer.lr.policy = "fixed";
  o.optimizer.lr.base_lr = 0.05f;
  o.seed = seed;
  return o;
}

}  // namespace braid

#endif  // BRAID_TESTS_TESTING_SMALL_TRAINING_H_
