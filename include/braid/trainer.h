// braid's public API for training from an application (installed as <braid/trainer.h>).
//
// A Trainer trains an image classifier (momentum SGD, Adam, AdamW or Adagrad): a model builder's
// ResNet named by `model`, or the application's own model given as two NetDefs (`net`: an init
// net filling the parameters, a forward net from the images to the logits). It adds the loss, the
// gradients and the optimizer, trains on Fashion-MNIST (IDX files), a DB of Caffe2 records (LMDB,
// written by braid_make_db), the application's own data (a DataSource, <braid/data_source.h>) or
// synthetic images, on one device or data parallel over several of
// this process's devices (the global batch split evenly, gradients averaged by all-reduce),
// evaluates the test set after each epoch, writes atomic checkpoints and resumes from them, and
// exports what it trained as a model folder the Predictor serves. braid_train is a command over
// it.
//
//   braid::TrainerOptions options;
//   options.model = "resnet20";
//   options.data = "synthetic";
//   options.synthetic.image_size = 12;
//   options.devices = {"cpu:0", "cpu:1"};  // data parallel
//   options.batch_size = 16;
//   options.iterations = 4;
//   options.on_progress = [](const braid::TrainingProgress& p) {
//     if (p.evaluated) std::cout << "test accuracy " << p.test_accuracy << "\n";
//   };
//   std::unique_ptr<braid::Trainer> trainer;
//   braid::Status s = braid::Trainer::Create(options, &trainer);
//   if (s.ok()) s = trainer->Run();
//   if (!s.ok()) std::cerr << s.ToString() << "\n";
//
// Errors (bad options or nets, unreadable data or checkpoints, a failing op) come back as a Status
// naming what failed; nothing throws across this API. Thread safety: a Trainer is used by one
// thread at a time; on_progress is called on that thread.
#ifndef BRAID_TRAINER_H_
#define BRAID_TRAINER_H_

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "braid/data_source.h"
#include "braid/status.h"

namespace braid {

class NetDef;  // proto/braid.pb.h, installed as <braid/braid.pb.h>

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

// The application's own classifier, trained instead of a builder's `model` when `forward` is set.
// The nets are NetDefs (<braid/braid.pb.h>) that Create copies:
//   init     fills every parameter (XavierFill, ConstantFill, ... with a shape argument); the
//            forward net must read every blob it writes.
//   forward  reads `input` (float32 [N, channels, image_size, image_size], normalised images) and
//            the parameters, and writes the logits ([N, classes]). Write it for training: the test
//            net runs the same ops with is_test=1 where an op takes it (SpatialBN, Dropout). A
//            parameter it writes (SpatialBN's running statistics) is state, not trained; the
//            weights of Conv, ConvTranspose and FC (their second input) get weight decay.
// The forward net's name names the model in checkpoints.
struct TrainerNets {
  const NetDef* init = nullptr;
  const NetDef* forward = nullptr;
  std::string input = "data";
  std::string logits{};  // "": the forward net's one external_output
};

// data = "synthetic": each class a random prototype image blended with noise (from `seed`), so a
// model can learn them. (Fashion-MNIST is 60000 + 10000 images of 1x28x28, 10 classes.)
struct SyntheticData {
  int64_t examples = 1024;      // the training set
  int64_t test_examples = 512;  // the test set: the training set's first test_examples
  int64_t channels = 1;
  int64_t image_size = 28;  // height and width
  int64_t classes = 10;
};

// data = "lmdb": DBs of TensorProtos records, as Caffe2's TensorProtosDBInput reads them and
// braid_make_db writes them: each record an image, uint8 [channels, size, size] (normalised as
// (pixel / 255 - mean) / std, as the Fashion-MNIST path does) or float32 (used as it is), and its
// label, an int32 scalar below `classes`. Records are read in key order, shuffled each epoch
// from `seed` as the IDX path shuffles, so a DB braid_make_db wrote from the IDX files trains to
// the same numbers as data = "fashion-mnist".
struct DbData {
  std::string train;  // the training set's DB (a path)
  std::string test;   // the test set's
  std::string type = "lmdb";
  int64_t classes = 10;
  float mean = 0.2860f;  // Fashion-MNIST's pixel mean and std on the 0..1 scale
  float std = 0.3530f;
};

// data = "source": the application's own data sets (<braid/data_source.h>), read as braid reads
// the others: batched, reshuffled every epoch from `seed`, sharded over a job's processes, read
// ahead on a background thread. Each example is two fields, in this order: an image, float32
// [C, S, S] (used as Read writes it: normalise it there), and its label, an int32 scalar below
// `classes`. The test set's fields must match the train set's; one object may serve both (braid
// never calls its Read twice at once). Create registers both sources under names of its own
// (<braid/data_source.h>); the Trainer shares their ownership until it is destroyed.
struct SourceData {
  std::shared_ptr<DataSource> train;
  std::shared_ptr<DataSource> test;
  int64_t classes = 10;
};

// The learning rate at iteration t = 1, 2, ... of T, as a multiple of learning_rate (Caffe2's
// LearningRate policies):
//   "cosine"     (1 + cos(pi t / T)) / 2: from 1 down to 0 over the run
//   "step"       gamma ^ floor(t / step_iterations) (step_iterations 0: one epoch)
//   "multistep"  gamma ^ (the milestones <= t)
//   "exp"        gamma ^ t
//   "inv"        (1 + gamma t) ^ -power
//   "poly"       (1 - t / T) ^ power
//   "fixed"      1
struct LearningRatePolicy {
  std::string policy = "cosine";
  int64_t step_iterations = 0;
  double gamma = 0.1;
  std::vector<int64_t> milestones;  // ascending iterations
  double power = 1;
};

// The update of each trained parameter (Caffe2's ops):
//   "momentum"  MomentumSGDUpdate with TrainerOptions::momentum and nesterov
//   "adam"      Adam (beta1, beta2, epsilon), weight decay added to the gradient (L2)
//   "adamw"     Adam with decoupled weight decay: param -= learning rate * weight_decay * param
//   "adagrad"   Adagrad (epsilon), weight decay added to the gradient
// Adam's bias correction counts from t = iteration + 1, as Caffe2's op does, and its epsilon is
// added to sqrt(second moment) before the correction scales the step (PyTorch's epsilon is this
// one over sqrt(1 - beta2^t)).
struct TrainerOptimizer {
  std::string type = "momentum";
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
};

// How the nets run.
struct TrainerExecution {
  std::string executor = "simple";  // "simple" (one op at a time) or "dag" (oneTBB flow graph)
  int threads = 0;                  // dag workers; 0: the machine's hardware threads
  int intra_op_threads = 0;         // every op's OpenMP team; 0: from the ops that run beside it
  bool recompute = true;  // with memory_plan: recompute SpatialBN + Relu outputs in the backward
  // With recompute: also recompute convolutions, a few chosen by planning, to bring each device's
  // planned train arena within this many bytes; 0: none (source:
  // runtime/models/training_footprint.h).
  int64_t recompute_budget = 0;
  std::string trace;      // "": none; else a Chrome trace of Run's first 10 iterations, written here
};

// The run's log lines (what braid_train prints: the run's description, progress every
// progress_every iterations, evaluations, checkpoints, the end) go to `stream` when set;
// progress_bar redraws one progress line in place instead (for a terminal).
struct TrainerLog {
  std::ostream* stream = nullptr;
  bool progress_bar = false;
};

// One rank of a multi-process job (world_size > 1), whose process group is connected before
// Create (ConnectProcessGroup, <braid/process_group.h>; braid_train --rendezvous does it).
// batch_size stays the job's global batch; this rank reads its shard of every batch and of the test
// set; gradients are averaged over the rank's devices and then over the ranks, each weighing alike
// (in buckets of at most allreduce_bucket_bytes); only rank 0 writes checkpoints.
struct TrainerProcesses {
  int rank = 0;
  int world_size = 1;
  std::string allreduce_algorithm = "ring";  // "ring" or "halving_doubling"
  int64_t allreduce_bucket_bytes = int64_t{1} << 20;
  bool nccl = false;  // cuda devices: NCCL across the processes instead of Gloo through the host
};

struct TrainerOptions {
  // A model builder's classifier: "resnet20", "resnet32", ... (CIFAR-style), "resnet18",
  // "resnet50"; ignored when net.forward is set.
  std::string model = "resnet20";
  TrainerNets net;
  // "fashion-mnist" (the IDX files in data_dir), "lmdb" (the DBs of `db`), "source" (the
  // application's, `source`) or "synthetic".
  std::string data = "fashion-mnist";
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  DbData db;
  SourceData source;
  SyntheticData synthetic;
  // One device, or several of this process's for data parallel training: "cpu:0", "sim:1",
  // "cuda:0".
  std::vector<std::string> devices = {"cpu:0"};
  int64_t batch_size = 64;        // the global batch, split evenly over the devices
  int64_t test_batch_size = 100;  // lowered to the largest divisor of the test set's size
  int epochs = 1;
  int64_t iterations = 0;  // > 0: this many iterations instead of `epochs`
  double learning_rate = 0.1;
  LearningRatePolicy learning_rate_policy;
  TrainerOptimizer optimizer;
  double momentum = 0.9;  // optimizer "momentum"
  bool nesterov = false;  // optimizer "momentum"
  double weight_decay = 1e-4;
  uint64_t seed = 1;        // the data order (parameter fills are seeded by their names)
  // Random parameter fills run on the host and are copied to the devices, so a run on cuda starts
  // from the weights a run on cpu or sim starts from; off, cuda devices draw their own (cuRAND).
  bool init_on_host = true;
  bool evaluate = true;     // the test set after each epoch and at the end
  std::string checkpoint;   // "": none; else written after each epoch and at the end
  bool resume = false;      // continue from `checkpoint` (parameters, momenta, iteration, data)
  bool memory_plan = true;  // one planned arena per device for the train and test nets
  int progress_every = 50;  // iterations between progress reports
  std::function<void(const TrainingProgress&)> on_progress;

  // Advanced: how the nets run, the log, and multi-process jobs.
  TrainerExecution execution;
  TrainerLog log;
  TrainerProcesses processes;
};

// What a run used, for a report at its end.
struct TrainingSummary {
  double images_per_second = 0;  // Run's training steps
  // With memory_plan, each device's train-net arena: every blob apart, as planned, and the
  // planner's lower bound.
  struct Arena {
    std::string device;
    int64_t naive_bytes = 0;
    int64_t planned_bytes = 0;
    int64_t lower_bound_bytes = 0;
  };
  std::vector<Arena> arenas;
  int64_t test_net_extra_bytes = 0;  // with memory_plan: what the test net adds to those arenas
  int64_t test_net_alone_bytes = 0;  // ... and what it would need alone
  int64_t train_scratch_bytes = 0;   // the nets' scratch areas (ops' temporary buffers)
  int64_t test_scratch_bytes = 0;
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
  // The model as trained so far, as a Caffe2 model-zoo folder that Predictor::FromModelFolder and
  // braid_run --model-dir serve (DIR is created; its files are replaced atomically):
  //   init_net.pb      a GivenTensorFill per parameter (the first device's values)
  //   predict_net.pb   the forward pass for inference (is_test ops), "data" -> Softmax "softmax"
  //   value_info.json  "data": float32 [1, channels, height, width] (any batch size runs)
  // It answers as the test net does: bit for bit on a cpu device served with
  // PredictorOptions::optimize_graph off where both pick the same convolution algorithms
  // (BRAID_ALGORITHM_SEARCH=rule, or a shared algorithm cache); otherwise within rounding.
  // Feed images normalised as the trainer's reader does: (pixel / 255 - 0.286) / 0.353.
  // FailedPrecondition on a rank other than 0 of a multi-process job (rank 0 exports the job's
  // model, with its batch-norm statistics).
  Status Export(const std::string& dir) const;

  int64_t iteration() const;
  int64_t total_iterations() const;
  TrainingSummary Summary() const;
  // The nets it built: the init net (parameters, the optimizer's state, the iteration counter), the
  // train net (reader, forward, loss, gradients, updates) and the test net.
  const NetDef& init_net() const;
  const NetDef& train_net() const;
  const NetDef& test_net() const;

 private:
  struct State;
  explicit Trainer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace braid

#endif  // BRAID_TRAINER_H_
