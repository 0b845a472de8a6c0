// Trains ResNet-20 (a model builder's) data parallel on two devices of this process through
// braid::Trainer: each device runs a replica of the nets on half of every batch of 64 and the
// gradients are averaged by all-reduce. Usage: train_data_parallel [DEVICE DEVICE] (default
// cpu:0 cpu:1; sim:0 sim:1 are simulated GPUs).
#include <braid/trainer.h>

#include <iostream>

int main(int argc, char** argv) {
  braid::TrainerOptions options;
  options.model = "resnet20";
  options.devices = {"cpu:0", "cpu:1"};
  if (argc > 1) options.devices.assign(argv + 1, argv + argc);
  options.data = "fashion-mnist";
  options.batch_size = 64;  // the global batch: 32 per device
  options.iterations = 100;
  options.progress_every = 25;
  options.on_progress = [](const braid::TrainingProgress& p) {
    if (p.evaluated) {
      std::cout << "test accuracy " << p.test_accuracy << ", loss " << p.test_loss << "\n";
    } else {  // loss and accuracy: the devices' means
      std::cout << "iteration " << p.iteration << "/" << p.total_iterations << ": loss " << p.loss
                << ", " << p.images_per_second << " images/s\n";
    }
  };
  std::unique_ptr<braid::Trainer> trainer;
  braid::Status status = braid::Trainer::Create(options, &trainer);
  braid::TrainingProgress last;
  if (status.ok()) status = trainer->Run(&last);
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 1;
  }
  return last.test_accuracy > 0.5 ? 0 : 1;  // ten classes: chance is 0.1
}
