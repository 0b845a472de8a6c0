// Trains ResNet-20 on Fashion-MNIST (Debian's dataset-fashion-mnist) for 100 iterations through
// braid::Trainer, reporting progress, and checks that it learned. Usage: train_model [DEVICE...]
// (default cpu:0; several devices train data parallel, the batch split between them).
#include <braid/trainer.h>

#include <iostream>

int main(int argc, char** argv) {
  braid::TrainerOptions options;
  options.model = "resnet20";
  options.data = "fashion-mnist";
  options.batch_size = 64;
  options.iterations = 100;
  options.progress_every = 25;
  if (argc > 1) options.devices.assign(argv + 1, argv + argc);
  options.on_progress = [](const braid::TrainingProgress& p) {
    if (p.evaluated) {
      std::cout << "test accuracy " << p.test_accuracy << ", loss " << p.test_loss << "\n";
    } else {
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
