// braid's public API for training from an application (installed as <braid/trainer.h>).
//
// A Trainer trains one of braid's model builders' image classifiers (ResNets) with momentum SGD
// and a cosine learning-rate schedule, on Fashion-MNIST (IDX files) or synthetic images, on one
// device or data parallel over several of this process's devices (the global batch split evenly,
// gradients averaged by all-reduce), evaluating the test set after each epoch, writing atomic
// checkpoints and resuming from them. It is what braid_train runs.
//
//   braid::TrainerOptions options;
//   options.model = "resnet20";
//   options.devices = {"cpu:0", "cpu:1"};  // data parallel
//   options.epochs = 1;
//   options.on_progress = [](const braid::TrainingProgress& p) {
//     if (p.evaluated) std::cout << "test accuracy " << p.test_accuracy << "\n";
//   };
//   std::unique_ptr<braid::Trainer> trainer;
//   braid::Status s = braid::Trainer::Create(options, &trainer);
//   if (s.ok()) s = trainer->Run();
//
// Errors (bad options, unreadable data or checkpoints, a failing op) come back as a Status naming
// what failed; nothing throws across this API. Thread safety: a Trainer is used by one thread at
// a time; on_progress is called on that thread.
#ifndef BRAID_TRAINER_H_
#define BRAID_TRAINER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "status.h"  // relative: resolves in-tree (runtime/) and installed (braid/)

namespace braid {

// What Run reports every progress_every iterations (the means over them) and after each
// evaluation (evaluated, with the test set's accuracy and loss).
struct TrainingProgress {
  int64_t iteration = 0;
  int64_t total_iterations = 0;
  int epoch = 0;
  double loss = 0;
  double accuracy = 0;
  double learning_rate = 0;
  double images_per_second = 0;
  bool evaluated = false;
  double test_accuracy = 0;
  double test_loss = 0;
};

struct TrainerOptions {
  // A model builder's classifier: "resnet20", "resnet32", ... (CIFAR-style), "resnet18",
  // "resnet50".
  std::string model = "resnet20";
  // "fashion-mnist" (the IDX files in data_dir) or "synthetic" (random images from `seed`).
  std::string data = "fashion-mnist";
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  // One device, or several of this process's for data parallel training: "cpu:0", "sim:1",
  // "cuda:0".
  std::vector<std::string> devices = {"cpu:0"};
  int64_t batch_size = 64;  // the global batch, split evenly over the devices
  int epochs = 1;
  int64_t iterations = 0;  // > 0: this many iterations instead of `epochs`
  double learning_rate = 0.1;
  double momentum = 0.9;
  double weight_decay = 1e-4;
  uint64_t seed = 1;
  bool evaluate = true;     // the test set after each epoch and at the end
  std::string checkpoint;   // "": none; else written after each epoch and at the end
  bool resume = false;      // continue from `checkpoint` (parameters, momenta, iteration, data)
  bool memory_plan = true;  // one planned arena per device for the train and test nets
  int progress_every = 50;  // iterations between progress reports
  std::function<void(const TrainingProgress&)> on_progress;
};

class Trainer {
 public:
  // Builds the nets and runs their init net (or loads the checkpoint when resuming).
  static Status Create(const TrainerOptions& options, std::unique_ptr<Trainer>* trainer);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Trains to the last iteration, evaluating and checkpointing after each epoch; *last, when
  // given, gets the last evaluation (evaluated is false when evaluate is off).
  Status Run(TrainingProgress* last = nullptr);
  // One iteration; *loss, when given, its training loss (the devices' mean).
  Status Step(double* loss = nullptr);
  // The whole test set.
  Status Evaluate(double* accuracy, double* loss);
  Status SaveCheckpoint(const std::string& path) const;

  int64_t iteration() const;
  int64_t total_iterations() const;

 private:
  struct State;
  explicit Trainer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace braid

#endif  // BRAID_TRAINER_H_
