#include "runtime/trainer.h"

#include <ostream>

#include "runtime/device.h"
#include "runtime/train/training_loop.h"

namespace braid {

struct Trainer::State {
  std::unique_ptr<TrainingLoop> loop;
};

namespace {

TrainingLoopOptions LoopOptions(const TrainerOptions& options) {
  if (options.devices.empty()) {
    throw Error(Status::InvalidArgument("trainer: name at least one device"));
  }
  if (options.progress_every < 1) {
    throw Error(Status::InvalidArgument("trainer: progress_every must be >= 1, got " +
                                        std::to_string(options.progress_every)));
  }
  TrainingLoopOptions loop;
  loop.model = options.model;
  loop.data = options.data;
  loop.data_dir = options.data_dir;
  loop.batch_size = options.batch_size;
  loop.epochs = options.epochs;
  loop.iters = options.iterations;
  loop.optimizer.lr.base_lr = static_cast<float>(options.learning_rate);
  loop.optimizer.momentum = static_cast<float>(options.momentum);
  loop.optimizer.weight_decay = static_cast<float>(options.weight_decay);
  loop.seed = options.seed;
  loop.evaluate = options.evaluate;
  loop.checkpoint = options.checkpoint;
  loop.resume = options.resume;
  loop.memory_plan = options.memory_plan;
  loop.log_every = options.progress_every;
  loop.on_progress = options.on_progress;
  loop.devices.clear();
  for (const std::string& device : options.devices) {
    loop.devices.push_back(DeviceToProto(ParseDevice(device)));
  }
  return loop;
}

}  // namespace

Trainer::Trainer(std::unique_ptr<State> state) : state_(std::move(state)) {}
Trainer::~Trainer() = default;

Status Trainer::Create(const TrainerOptions& options, std::unique_ptr<Trainer>* trainer) {
  return StatusFromCall([&] {
    auto state = std::make_unique<State>();
    state->loop = std::make_unique<TrainingLoop>(LoopOptions(options));
    trainer->reset(new Trainer(std::move(state)));
  });
}

Status Trainer::Run(TrainingProgress* last) {
  return StatusFromCall([&] {
    std::ostream no_log(nullptr);  // progress goes to on_progress
    const Evaluation evaluation = state_->loop->Run(no_log);
    if (last == nullptr) return;
    *last = TrainingProgress();
    last->iteration = last->total_iterations = state_->loop->iteration();
    last->evaluated = evaluation.examples > 0;
    last->test_accuracy = evaluation.accuracy;
    last->test_loss = evaluation.loss;
  });
}

Status Trainer::Step(double* loss) {
  return StatusFromCall([&] {
    const float step_loss = state_->loop->Step();
    if (loss != nullptr) *loss = step_loss;
  });
}

Status Trainer::Evaluate(double* accuracy, double* loss) {
  return StatusFromCall([&] {
    const Evaluation evaluation = state_->loop->Evaluate();
    *accuracy = evaluation.accuracy;
    *loss = evaluation.loss;
  });
}

Status Trainer::SaveCheckpoint(const std::string& path) const {
  return StatusFromCall([&] { state_->loop->SaveCheckpoint(path); });
}

int64_t Trainer::iteration() const { return state_->loop->iteration(); }
int64_t Trainer::total_iterations() const { return state_->loop->total_iterations(); }

}  // namespace braid
