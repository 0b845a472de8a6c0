#include "braid/trainer.h"

#include <ostream>

#include "runtime/core/device.h"
#include "runtime/io/model_folder.h"
#include "runtime/train/model_export.h"
#include "runtime/train/training_loop.h"

namespace braid {

struct Trainer::State {
  std::unique_ptr<TrainingLoop> loop;
  std::ostream* log = nullptr;
};

namespace {

void CheckOptions(const TrainerOptions& options) {
  if (options.devices.empty()) {
    throw Error(Status::InvalidArgument("trainer: name at least one device"));
  }
  if (options.progress_every < 1) {
    throw Error(Status::InvalidArgument("trainer: progress_every must be >= 1, got " +
                                        std::to_string(options.progress_every)));
  }
  if ((options.net.init == nullptr) != (options.net.forward == nullptr)) {
    throw Error(Status::InvalidArgument("trainer: net needs both an init and a forward net"));
  }
}

std::optional<NetModel> NetModelOf(const TrainerNets& net) {
  if (net.forward == nullptr) return std::nullopt;
  return NetModel{*net.init, *net.forward, net.input, net.logits};
}

void SetData(const TrainerOptions& options, TrainingLoopOptions* loop) {
  loop->data = options.data;
  loop->data_dir = options.data_dir;
  loop->synthetic_examples = options.synthetic.examples;
  loop->synthetic_test_examples = options.synthetic.test_examples;
  loop->channels = options.synthetic.channels;
  loop->image_size = options.synthetic.image_size;
  loop->num_classes = options.synthetic.classes;
  if (options.data == "lmdb") {
    loop->db_type = options.db.type;
    loop->db = options.db.train;
    loop->test_db = options.db.test;
    loop->num_classes = options.db.classes;
    loop->pixel_mean = options.db.mean;
    loop->pixel_std = options.db.std;
  }
  if (options.data == "source") {
    loop->train_source = options.source.train;
    loop->test_source = options.source.test;
    loop->num_classes = options.source.classes;
  }
  loop->batch_size = options.batch_size;
  loop->test_batch_size = options.test_batch_size;
  loop->seed = options.seed;
  loop->init_on_host = options.init_on_host;
}

void SetOptimizer(const TrainerOptions& options, OptimizerSpec* optimizer) {
  optimizer->lr.policy = options.learning_rate_policy.policy;
  optimizer->lr.base_lr = static_cast<float>(options.learning_rate);
  optimizer->lr.stepsize = options.learning_rate_policy.step_iterations;
  optimizer->lr.stepsizes = options.learning_rate_policy.milestones;
  optimizer->lr.gamma = static_cast<float>(options.learning_rate_policy.gamma);
  optimizer->lr.power = static_cast<float>(options.learning_rate_policy.power);
  optimizer->type = options.optimizer.type;
  optimizer->beta1 = static_cast<float>(options.optimizer.beta1);
  optimizer->beta2 = static_cast<float>(options.optimizer.beta2);
  optimizer->epsilon = static_cast<float>(options.optimizer.epsilon);
  optimizer->momentum = static_cast<float>(options.momentum);
  optimizer->nesterov = options.nesterov;
  optimizer->weight_decay = static_cast<float>(options.weight_decay);
}

TrainingLoopOptions LoopOptions(const TrainerOptions& options) {
  CheckOptions(options);
  TrainingLoopOptions loop;
  loop.model = options.model;
  loop.net_model = NetModelOf(options.net);
  SetData(options, &loop);
  loop.epochs = options.epochs;
  loop.iters = options.iterations;
  SetOptimizer(options, &loop.optimizer);
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
  loop.executor = options.execution.executor;
  loop.threads = options.execution.threads;
  loop.intra_op_threads = options.execution.intra_op_threads;
  loop.recompute = options.execution.recompute;
  loop.recompute_budget = options.execution.recompute_budget;
  loop.trace = options.execution.trace;
  loop.progress_bar = options.log.progress_bar;
  loop.rank = options.processes.rank;
  loop.world_size = options.processes.world_size;
  loop.allreduce_algorithm = options.processes.allreduce_algorithm;
  loop.allreduce_bucket_bytes = options.processes.allreduce_bucket_bytes;
  loop.nccl_across_processes = options.processes.nccl;
  return loop;
}

}  // namespace

Trainer::Trainer(std::unique_ptr<State> state) : state_(std::move(state)) {}
Trainer::~Trainer() = default;

Status Trainer::Create(const TrainerOptions& options, std::unique_ptr<Trainer>* trainer) {
  return StatusFromCall([&] {
    auto state = std::make_unique<State>();
    state->loop = std::make_unique<TrainingLoop>(LoopOptions(options));
    state->log = options.log.stream;
    trainer->reset(new Trainer(std::move(state)));
  });
}

Status Trainer::Run(TrainingProgress* last) {
  return StatusFromCall([&] {
    std::ostream no_log(nullptr);  // progress goes to on_progress only
    const Evaluation evaluation = state_->loop->Run(state_->log ? *state_->log : no_log);
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

Status Trainer::Export(const std::string& dir) const {
  if (state_->loop->rank() != 0) {
    return Status::FailedPrecondition("trainer: rank " + std::to_string(state_->loop->rank()) +
                                      " does not export; rank 0 exports the job's model");
  }
  ModelFolder model;
  const Status exported = StatusFromCall([&] { model = ExportedModel(*state_->loop); });
  return exported.ok() ? WriteModelFolder(dir, model) : exported;
}

int64_t Trainer::iteration() const { return state_->loop->iteration(); }
int64_t Trainer::total_iterations() const { return state_->loop->total_iterations(); }

TrainingSummary Trainer::Summary() const {
  const TrainingLoop& loop = *state_->loop;
  TrainingSummary summary;
  summary.images_per_second = loop.images_per_second();
  if (const NetMemory* memory = loop.train_memory()) {
    for (const ArenaPlan& arena : memory->plan().arenas) {
      summary.arenas.push_back({DeviceFromProto(arena.device).ToString(), arena.naive_bytes,
                                arena.arena_bytes, arena.lower_bound_bytes});
    }
    summary.test_net_extra_bytes = loop.test_memory()->allocated_bytes();
    summary.test_net_alone_bytes = loop.test_memory()->plan().arena_bytes();
  }
  summary.train_scratch_bytes = loop.train_net().scratch_bytes();
  summary.test_scratch_bytes = loop.test_net().scratch_bytes();
  return summary;
}

const NetDef& Trainer::init_net() const { return state_->loop->nets().params.init_net; }
const NetDef& Trainer::train_net() const { return state_->loop->nets().train; }
const NetDef& Trainer::test_net() const { return state_->loop->nets().test; }

}  // namespace braid
