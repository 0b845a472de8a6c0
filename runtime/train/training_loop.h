// TrainingLoop: trains an image classifier on one device and evaluates it on a held-out set.
//
// The constructor builds the model's init, train and test nets (runtime/models/training_nets.h;
// a model builder's ResNet or the application's NetModel) with IdxImageInput readers
// (ops/data/idx_image_input_op.h; TensorProtosDBInput for data = "lmdb", DataSourceInput for
// data = "source") in front, runs the
// init net, loads a checkpoint when resuming, then builds the train net in its workspace and the
// test net in a child workspace that reads the same parameter blobs. Run trains for the configured
// epochs (or iterations), logging one line every log_every iterations, evaluating the whole test
// set and saving a checkpoint after each epoch and at the end:
//
//   TrainingLoopOptions o;
//   o.model = "resnet20";
//   o.epochs = 3;
//   o.checkpoint = "/tmp/resnet20.pb";
//   TrainingLoop trainer(o);
//   trainer.Run(std::cout);
//   // iter 50/2814 epoch 1 loss 1.0321 accuracy 0.6250 lr 0.099969 images/s 310.5
//   // epoch 1 test accuracy 0.8712 loss 0.3507 (10000 images, 9.8 s)
//
// Resuming (resume = true) restores parameters, momenta and the iteration counter from the
// checkpoint and starts the training reader at the example the saved run would have read next, so
// a resumed run continues the same data stream and learning-rate schedule.
//
// Memory (memory_plan = true): the train net's gradients and activations are planned into one
// arena per device (runtime/exec/memory_planning.h, training mode), and the test net plans into
// those same arenas, since it runs only between training iterations; where it needs more (a test
// batch much larger than a device's share of the training batch), the shared arena grows to the
// test net's size for both nets, so test_memory()->allocated_bytes() is only what the test net
// needs beyond the train net's arenas. Blobs the trainer or the test net reads are kept.
//
// Devices: with one device every op runs there. With several (cpu, sim or cuda devices of this
// process, and the processes of a job), the nets are data parallel
// (runtime/models/data_parallel.h): batch_size is the global batch, split evenly across the
// devices, gradients are averaged over them (Allreduce within a process, ProcessAllreduce buckets
// across processes), and the logged loss and accuracy are the devices' mean.
//
// Errors (bad options, unreadable data or checkpoint, a failing op) throw braid::Error.
// Thread safety: a TrainingLoop is used by one thread.
#ifndef BRAID_RUNTIME_TRAIN_TRAINING_LOOP_H_
#define BRAID_RUNTIME_TRAIN_TRAINING_LOOP_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "braid/trainer.h"  // TrainingProgress
#include "proto/braid.pb.h"
#include "runtime/core/workspace.h"
#include "runtime/exec/chrome_trace.h"
#include "runtime/exec/memory_planning.h"
#include "runtime/exec/net.h"
#include "runtime/io/data_source_registry.h"
#include "runtime/models/data_parallel.h"
#include "runtime/models/net_model.h"
#include "runtime/models/training_footprint.h"  // RecomputeBudgetReport
#include "runtime/models/training_nets.h"

namespace braid {

struct TrainingLoopOptions {
  std::string model = "resnet20";  // a model builder's (runtime/models/resnet.h)
  // The application's own model instead (runtime/models/net_model.h); `model` becomes its name.
  std::optional<NetModel> net_model;
  std::string data = "fashion-mnist";  // fashion-mnist | lmdb | source | synthetic
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  // lmdb: DBs of TensorProtos records (an image, uint8 or float32 [C, S, S], and an int32 scalar
  // label), read by TensorProtosDBInput (ops/data/tensor_protos_db_input_op.h); channels and
  // image_size come from the train DB's first record, num_classes stays as given. uint8 images
  // are normalised with pixel_mean and pixel_std (Fashion-MNIST's, which the IDX path uses).
  std::string db_type = "lmdb";
  std::string db;
  std::string test_db;
  float pixel_mean = 0.2860f;
  float pixel_std = 0.3530f;
  // source: the application's data sets (<braid/data_source.h>), each example an image
  // (float32 [C, S, S]) and an int32 scalar label; registered under fresh names while the loop
  // lives, read by DataSourceInput (ops/data/data_source_input_op.h); channels and image_size
  // come from the train set's fields, num_classes stays as given.
  std::shared_ptr<DataSource> train_source;
  std::shared_ptr<DataSource> test_source;
  // synthetic data: the training set's size and the image shape; the test set is its first
  // synthetic_test_examples examples.
  int64_t synthetic_examples = 1024;
  int64_t synthetic_test_examples = 512;
  int64_t image_size = 28;
  int64_t channels = 1;
  int64_t num_classes = 10;

  int64_t batch_size = 64;
  int64_t test_batch_size = 100;  // lowered to the largest divisor of the test set's size
  int epochs = 3;
  int64_t iters = 0;        // > 0: train this many iterations instead of `epochs`
  OptimizerSpec optimizer;  // lr.max_iter (cosine) and lr.stepsize 0 (step) default to the run
  std::string executor = "simple";  // simple | dag
  int threads = 0;                  // dag workers; 0: the machine's hardware threads
  // > 0: every op's OpenMP team (the nets' intra_op_threads argument); 0: each op's budget from
  // the ops that may run beside it (runtime/exec/intra_op_threads.h).
  int intra_op_threads = 0;
  uint64_t seed = 1;
  // Random parameter fills run on the host and are copied to the devices
  // (runtime/models/host_fills.h): the same seed gives the same initial weights on cpu, sim and
  // cuda. Off: cuda devices fill with cuRAND (faster for large models, other values).
  bool init_on_host = true;
  int log_every = 50;
  bool evaluate = true;
  std::string checkpoint;  // "" : none
  bool resume = false;
  bool memory_plan = false;    // plan the nets' memory into one shared arena (see above)
  // With memory_plan only (without it, it saves nothing): recompute SpatialBN + Relu outputs in
  // the backward pass (runtime/models/recompute.h).
  bool recompute = true;
  // With memory_plan and recompute: also recompute convolutions, a few chosen by planning, to
  // bring each device's planned train arena within this many bytes (BuildTrainingNetsWithinArena,
  // runtime/models/training_footprint.h); 0: none. Describe() says what it did.
  int64_t recompute_budget = 0;
  std::string trace;           // "": none; else a Chrome trace of the first traced_iterations
  int traced_iterations = 10;  // ... train-net runs of Run, written when Run ends
  bool progress_bar = false;   // redraw one progress line (for a terminal) instead of log lines
  // Called by Run with each log line's numbers and after each evaluation (include/braid/trainer.h).
  std::function<void(const TrainingProgress&)> on_progress;
  std::vector<DeviceOption> devices{DeviceOption()};
  // One rank of a multi-process job (world_size > 1; runtime/dist/process_group.h's current group
  // must be connected first): batch_size stays the job's global batch, this rank reads its shard
  // of every global batch and of the test set, gradients are averaged over every device of every
  // process (allreduce_algorithm: ring or halving_doubling; in buckets of at most
  // allreduce_bucket_bytes, runtime/models/data_parallel.h), evaluations are the job's (each rank
  // evaluates its shard of the test set with rank 0's batch-norm statistics), and only rank 0
  // writes checkpoints (every rank reads them on resume).
  int rank = 0;
  int world_size = 1;
  std::string allreduce_algorithm = "ring";
  int64_t allreduce_bucket_bytes = ProcessScaleOut{}.bucket_bytes;
  bool nccl_across_processes = false;  // cuda devices: NCCL instead of Gloo through the host
};

struct Evaluation {
  double accuracy = 0;
  double loss = 0;
  int64_t examples = 0;
  double seconds = 0;
};

class TrainingLoop {
 public:
  explicit TrainingLoop(const TrainingLoopOptions& options);
  ~TrainingLoop();
  TrainingLoop(const TrainingLoop&) = delete;
  TrainingLoop& operator=(const TrainingLoop&) = delete;

  // Trains until total_iterations(), evaluating and checkpointing after each epoch; returns the
  // last evaluation (zero when evaluate is off).
  Evaluation Run(std::ostream& log);
  // One iteration of the train net; returns its loss.
  float Step();
  // The test net over the whole test set.
  Evaluation Evaluate();
  void SaveCheckpoint(const std::string& path) const;

  int64_t iteration() const { return iteration_; }
  int64_t total_iterations() const { return total_iterations_; }
  int64_t iterations_per_epoch() const { return iterations_per_epoch_; }
  int rank() const { return options_.rank; }
  const TrainingNets& nets() const { return nets_; }
  // The forward pass the nets were built from (runtime/models/training_nets.h), and the images it
  // takes: [channels, image_size, image_size].
  const std::function<std::string(ModelBuilder*, const std::string&)>& forward() const {
    return forward_;
  }
  std::vector<int64_t> image_dims() const {
    return {options_.channels, options_.image_size, options_.image_size};
  }
  const Workspace& workspace() const { return *workspace_; }
  // The test net's (a child of workspace()): after Evaluate, its last batch's blobs.
  const Workspace& test_workspace() const { return *test_workspace_; }
  // Training throughput of Run so far: images over the seconds spent in training steps.
  double images_per_second() const {
    return train_seconds_ > 0 ? images_trained_ / train_seconds_ : 0;
  }
  // The memory plans (null unless options.memory_plan). test_memory()->allocated_bytes() is what
  // the test net adds to the train net's arenas; its plan().arena_bytes() what it would need alone.
  const NetMemory* train_memory() const { return train_memory_.get(); }
  const NetMemory* test_memory() const { return test_memory_.get(); }
  // The train and test nets' scratch areas (runtime/exec/scratch.h), once they have run.
  const Net& train_net() const { return *train_net_; }
  const Net& test_net() const { return *test_net_; }
  // One line describing the run (model, data, schedule), for the log's head.
  std::string Describe() const;

 private:
  OperatorDef ReaderOp(bool train, int64_t start_example) const;
  // data = "lmdb": the DBs' sizes and the image shape, from the DBs.
  void DescribeDbs();
  // data = "source": registers the sources; their sizes and the image shape.
  void RegisterSources();
  // The reader arguments both data sources share: batch, shards, order.
  void AddReaderArgs(bool train, int64_t start_example, OperatorDef* op) const;
  // Multi-process: every rank's device-0 replica takes rank 0's non-trainable state (batch-norm
  // running statistics, which each replica gathers from its own shard), so every rank evaluates
  // the model rank 0 checkpoints, as one process evaluates its device 0's.
  void ShareRankZeroState();
  void LogProgress(std::ostream& log, double seconds, double loss_sum, double accuracy_sum,
                   int64_t iterations) const;
  void EndEpoch(std::ostream& log, Evaluation* last);
  void DrawProgressBar(std::ostream& log, double loss, double accuracy, int64_t run_iters,
                       double run_seconds) const;
  void PlanNetsMemory();
  // The mean over devices of a float scalar blob of the train net (`blob` as TrainingNets names
  // it).
  float DeviceMean(const std::string& blob) const;

  TrainingLoopOptions options_;
  int64_t train_examples_ = 0;
  bool db_images_uint8_ = true;  // data = "lmdb": the records hold uint8 images (normalised)
  std::unique_ptr<ScopedDataSource> train_source_;  // data = "source": the sources' names
  std::unique_ptr<ScopedDataSource> test_source_;
  int64_t test_examples_ = 0;
  int64_t test_batch_size_ = 0;
  int64_t iterations_per_epoch_ = 0;
  int64_t total_iterations_ = 0;
  int64_t iteration_ = 0;
  double train_seconds_ = 0;   // Run: seconds in training steps
  double images_trained_ = 0;  // Run: images those steps trained on
  TrainingNets nets_;
  std::function<std::string(ModelBuilder*, const std::string&)> forward_;
  RecomputeBudgetReport recompute_report_;  // with recompute_budget
  std::unique_ptr<Workspace> workspace_;       // parameters, the train net
  std::unique_ptr<Workspace> test_workspace_;  // child of workspace_: the test net's activations
  Net* train_net_ = nullptr;                   // owned by workspace_
  Net* test_net_ = nullptr;                    // owned by test_workspace_
  std::unique_ptr<NetMemory> train_memory_;    // with memory_plan: the arenas both nets use
  std::unique_ptr<NetMemory> test_memory_;
  std::unique_ptr<ChromeTraceWriter> trace_;  // observes train_net_ when options.trace is set
};

}  // namespace braid

#endif  // BRAID_RUNTIME_TRAIN_TRAINING_LOOP_H_
