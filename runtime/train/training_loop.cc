#include "runtime/train/training_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "braid/status.h"
#include "runtime/core/dims_text.h"
#include "runtime/dist/process_group.h"
#include "runtime/io/checkpoint.h"
#include "runtime/io/idx_file.h"
#include "runtime/io/tensor_protos_record.h"
#include "runtime/models/data_parallel.h"
#include "runtime/models/host_fills.h"
#include "runtime/models/resnet.h"
#include "runtime/models/training_footprint.h"

namespace braid {
namespace {

// "momentum 0.9", "adam (beta1 0.9, beta2 0.999, epsilon 1e-08)", ...
std::string DescribeOptimizer(const OptimizerSpec& o) {
  char text[128];
  if (o.type == "momentum") {
    std::snprintf(text, sizeof(text), "momentum %g%s", o.momentum, o.nesterov ? " (nesterov)" : "");
  } else if (o.type == "adagrad") {
    std::snprintf(text, sizeof(text), "adagrad (epsilon %g)", o.epsilon);
  } else {
    std::snprintf(text, sizeof(text), "%s (beta1 %g, beta2 %g, epsilon %g)", o.type.c_str(),
                  o.beta1, o.beta2, o.epsilon);
  }
  return text;
}

// Fashion-MNIST's training-set pixel mean and standard deviation (on the 0..1 scale).
// The evaluation's all-reduce tag: apart from the gradients' (runtime/models/data_parallel.h
// numbers those from 0).
constexpr uint32_t kEvaluationTag = 1u << 30;
constexpr uint32_t kStateTag = kEvaluationTag + 1;

constexpr float kPixelMean = 0.2860f;
constexpr float kPixelStd = 0.3530f;

[[noreturn]] void ThrowInvalid(const std::string& message) {
  throw Error(Status::InvalidArgument("trainer: " + message));
}

ProcessGroup* RequireProcessGroup() {
  ProcessGroup* group = CurrentProcessGroup();
  if (group == nullptr) ThrowInvalid("world_size > 1 but no process group is connected");
  return group;
}

// The first element of `tensor`, on whichever device it is.
template <typename T>
T FirstOnHost(const Tensor& tensor) {
  if (tensor.device().is_host()) return tensor.data<T>()[0];
  Tensor host;
  host.CopyFrom(tensor);
  return host.data<T>()[0];
}

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SetExecutor(const TrainingLoopOptions& o, NetDef* net) {
  net->set_type(o.executor);
  auto add_arg = [net](const std::string& name, int value) {
    Argument* arg = net->add_arg();
    arg->set_name(name);
    arg->set_i(value);
  };
  if (o.threads > 0) add_arg("num_workers", o.threads);
  if (o.intra_op_threads > 0) add_arg("intra_op_threads", o.intra_op_threads);
}

void CheckOptions(const TrainingLoopOptions& o) {
  if (o.data != "fashion-mnist" && o.data != "synthetic" && o.data != "lmdb" &&
      o.data != "source") {
    ThrowInvalid("data must be fashion-mnist, lmdb, source or synthetic, got '" + o.data + "'");
  }
  if (o.data == "lmdb" && (o.db.empty() || o.test_db.empty())) {
    ThrowInvalid("data lmdb needs the train and test DBs' paths");
  }
  if (o.data == "source" && (o.train_source == nullptr || o.test_source == nullptr)) {
    ThrowInvalid("data source needs the train and test sources (TrainerOptions::source)");
  }
  if (o.executor != "simple" && o.executor != "dag") {
    ThrowInvalid("executor must be simple or dag, got '" + o.executor + "'");
  }
  if (o.batch_size <= 0 || o.test_batch_size <= 0) ThrowInvalid("batch sizes must be positive");
  if (o.devices.empty()) ThrowInvalid("devices lists no device");
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size) {
    ThrowInvalid("rank " + std::to_string(o.rank) + " is not in [0, world_size " +
                 std::to_string(o.world_size) + ")");
  }
  const int64_t devices = static_cast<int64_t>(o.devices.size()) * o.world_size;
  if (o.batch_size % devices != 0) {
    ThrowInvalid("batch_size " + std::to_string(o.batch_size) + " does not split evenly over " +
                 std::to_string(devices) + " devices" +
                 (o.world_size > 1 ? " (of " + std::to_string(o.world_size) + " processes)" : ""));
  }
  if (o.iters <= 0 && o.epochs <= 0) ThrowInvalid("epochs or iterations must be positive");
  if (o.log_every <= 0) ThrowInvalid("progress_every must be positive");
  if (o.resume && o.checkpoint.empty()) ThrowInvalid("resume needs a checkpoint path");
  if (o.data == "synthetic" && (o.synthetic_examples <= 0 || o.synthetic_test_examples <= 0 ||
                                o.synthetic_test_examples > o.synthetic_examples)) {
    ThrowInvalid("synthetic data needs 0 < test examples <= examples");
  }
}

// The largest divisor of `count` not above `wanted`, so that evaluation covers the set exactly.
int64_t DividingBatch(int64_t count, int64_t wanted) {
  for (int64_t b = std::min(count, wanted); b > 1; --b) {
    if (count % b == 0) return b;
  }
  return 1;
}

std::string IdxPath(const TrainingLoopOptions& o, bool train, const char* kind) {
  return o.data_dir + "/" + (train ? "train" : "t10k") + "-" + kind + "-ubyte.gz";
}

}  // namespace

TrainingLoop::TrainingLoop(const TrainingLoopOptions& options) : options_(options) {
  CheckOptions(options_);
  if (options_.world_size > 1) {
    const ProcessGroup* group = RequireProcessGroup();
    if (group->rank() != options_.rank || group->size() != options_.world_size) {
      ThrowInvalid("processes say rank " + std::to_string(options_.rank) + " of " +
                   std::to_string(options_.world_size) + ", but the connected process group is " +
                   "rank " + std::to_string(group->rank()) + " of " +
                   std::to_string(group->size()));
    }
  }
  if (options_.data == "fashion-mnist") {
    options_.channels = 1;
    options_.image_size = 28;
    options_.num_classes = 10;
    train_examples_ = IdxFile::Load(IdxPath(options_, true, "labels-idx1")).dim(0);
    test_examples_ = IdxFile::Load(IdxPath(options_, false, "labels-idx1")).dim(0);
  } else if (options_.data == "lmdb") {
    DescribeDbs();
  } else if (options_.data == "source") {
    RegisterSources();
  } else {
    train_examples_ = options_.synthetic_examples;
    test_examples_ = options_.synthetic_test_examples;
  }
  if (test_examples_ % options_.world_size != 0) {
    ThrowInvalid("the test set's " + std::to_string(test_examples_) + " images do not split " +
                 "evenly over " + std::to_string(options_.world_size) + " processes");
  }
  // Each rank's share of a test batch; the job's test batch is world_size of them.
  test_batch_size_ =
      DividingBatch(test_examples_ / options_.world_size, options_.test_batch_size);
  iterations_per_epoch_ = (train_examples_ + options_.batch_size - 1) / options_.batch_size;
  total_iterations_ = options_.iters > 0 ? options_.iters : options_.epochs * iterations_per_epoch_;
  LearningRateSchedule& lr = options_.optimizer.lr;
  if (lr.max_iter <= 0) lr.max_iter = total_iterations_;
  if (lr.stepsize <= 0) lr.stepsize = iterations_per_epoch_;

  TrainingNetsSpec nets_spec;
  if (options_.net_model) {
    options_.model = NetModelName(*options_.net_model);
    nets_spec.forward = NetModelForward(*options_.net_model);
  } else {
    const ResNetSpec spec =
        ResNetSpecFromName(options_.model, options_.channels, options_.num_classes);
    nets_spec.forward = [spec](ModelBuilder* b, const std::string& data) {
      return AddResNet(b, spec, data);
    };
  }
  nets_spec.name = options_.model;
  forward_ = nets_spec.forward;
  nets_spec.train_input = ReaderOp(/*train=*/true, 0);
  nets_spec.test_input = ReaderOp(/*train=*/false, 0);
  nets_spec.optimizer = options_.optimizer;
  nets_spec.device = options_.devices.at(0);
  // Recomputing saves memory only when the planner recycles what the forward pass no longer keeps.
  nets_spec.recompute_bn_relu = options_.recompute && options_.memory_plan;
  // The budget is each device's: the nets are replicated before each candidate is planned.
  nets_ = BuildTrainingNetsWithinArena(
      nets_spec, nets_spec.recompute_bn_relu ? options_.recompute_budget : 0,
      [this](TrainingNets* nets) {
        if (options_.devices.size() > 1 || options_.world_size > 1) {
          *nets = ReplicateForDevices(
              *nets, options_.devices,
              {options_.world_size, options_.allreduce_algorithm, options_.allreduce_bucket_bytes,
               options_.nccl_across_processes});
        }
        SetExecutor(options_, &nets->train);
        SetExecutor(options_, &nets->test);
      },
      &recompute_report_);
  std::vector<std::string> host_fills;
  if (options_.init_on_host) host_fills = MoveRandomFillsToHost(&nets_.params.init_net);

  workspace_ = std::make_unique<Workspace>();
  const Status init = workspace_->RunNetOnce(nets_.params.init_net);
  if (!init.ok()) throw Error(init);
  for (const std::string& blob : host_fills) workspace_->GetBlob(blob)->FreeMemory();
  if (options_.resume) {
    LoadCheckpoint(options_.checkpoint, nets_.CheckpointBlobs(), options_.model, workspace_.get());
    iteration_ = FirstOnHost<int64_t>(*workspace_->GetBlob(nets_.OnDevice(0, nets_.iter)));
    SetIntArg(nets_.train.mutable_op(0), "start_example", iteration_ * options_.batch_size);
  }
  train_net_ = workspace_->CreateNet(nets_.train);
  test_workspace_ = std::make_unique<Workspace>(workspace_.get());
  test_net_ = test_workspace_->CreateNet(nets_.test);
  if (options_.memory_plan) PlanNetsMemory();
  if (!options_.trace.empty()) {
    trace_ = std::make_unique<ChromeTraceWriter>(options_.traced_iterations);
    train_net_->AddObserver(trace_.get());
  }
}

TrainingLoop::~TrainingLoop() = default;

void TrainingLoop::PlanNetsMemory() {
  // The plans runtime/models/training_footprint.h predicts the device memory of.
  train_memory_ = PlanNetMemory(*train_net_, workspace_.get(), TrainNetPlanOptions(nets_));
  MemoryPlanOptions test = TestNetPlanOptions(nets_);
  // Grows the train net's arenas where the test net needs more; neither net has run yet.
  test.share_arenas_of = train_memory_.get();
  test_memory_ = PlanNetMemory(*test_net_, test_workspace_.get(), test);
}

namespace {

// A DB's records as the Trainer needs them: an image [C, S, S] (uint8 or float32) and an int32
// scalar label.
TensorProtosDbLayout CheckedImageDb(const std::string& type, const std::string& path) {
  TensorProtosDbLayout layout = DescribeTensorProtosDb(type, path);
  const std::vector<RecordTensor>& t = layout.tensors;
  const bool image = t.size() == 2 && t[0].dims.size() == 3 && t[0].dims[1] == t[0].dims[2] &&
                     (t[0].dtype == DType::kUInt8 || t[0].dtype == DType::kFloat32);
  if (!image || t[1].dtype != DType::kInt32 || !t[1].dims.empty()) {
    std::string held;
    for (const RecordTensor& tensor : t) held += (held.empty() ? "" : ", ") + tensor.ToString();
    ThrowInvalid(type + " '" + path + "': the trainer reads records of an image (uint8 or " +
                 "float32 [C,S,S]) and an int32 scalar label, but the first record holds " + held);
  }
  return layout;
}

}  // namespace

void TrainingLoop::DescribeDbs() {
  const TensorProtosDbLayout train = CheckedImageDb(options_.db_type, options_.db);
  const TensorProtosDbLayout test = CheckedImageDb(options_.db_type, options_.test_db);
  if (!(test.tensors == train.tensors)) {
    ThrowInvalid("the test DB's records (" + test.tensors[0].ToString() + ", ...) differ from " +
                 "the train DB's (" + train.tensors[0].ToString() + ", ...)");
  }
  options_.channels = train.tensors[0].dims[0];
  options_.image_size = train.tensors[0].dims[1];
  db_images_uint8_ = train.tensors[0].dtype == DType::kUInt8;
  train_examples_ = train.count;
  test_examples_ = test.count;
}

namespace {

// A source as the Trainer reads it: an image (float32 [C,S,S]) and an int32 scalar label.
const std::vector<DataField>& CheckedImageSource(const ScopedDataSource& scoped,
                                                 const std::string& which) {
  const std::vector<DataField>& f = scoped.entry().fields;
  const bool image = f.size() == 2 && f[0].dtype == DType::kFloat32 && f[0].dims.size() == 3 &&
                     f[0].dims[1] == f[0].dims[2] && f[0].dims[0] > 0 && f[0].dims[1] > 0;
  if (!image || f[1].dtype != DType::kInt32 || !f[1].dims.empty()) {
    std::string held;
    for (const DataField& field : f) {
      held += (held.empty() ? "" : ", ") + field.name + " " + DTypeName(field.dtype) +
              DimsText(field.dims);
    }
    ThrowInvalid("the " + which + " source: the trainer reads examples of two fields, an image " +
                 "(float32 [C,S,S]) and an int32 scalar label, but its fields are " + held);
  }
  return f;
}

std::unique_ptr<ScopedDataSource> Registered(const std::shared_ptr<DataSource>& source,
                                             const std::string& which) {
  try {
    return std::make_unique<ScopedDataSource>("trainer/" + which, source);
  } catch (const Error& e) {
    ThrowInvalid("the " + which + " source: " + e.status().message());
  }
}

}  // namespace

void TrainingLoop::RegisterSources() {
  train_source_ = Registered(options_.train_source, "train");
  test_source_ = Registered(options_.test_source, "test");
  const std::vector<DataField>& train = CheckedImageSource(*train_source_, "train");
  const std::vector<DataField>& test = CheckedImageSource(*test_source_, "test");
  if (test[0].dims != train[0].dims) {
    ThrowInvalid("the test source's images are " + DimsText(test[0].dims) +
                 " but the train source's are " + DimsText(train[0].dims));
  }
  options_.channels = train[0].dims[0];
  options_.image_size = train[0].dims[1];
  train_examples_ = train_source_->entry().size;
  test_examples_ = test_source_->entry().size;
}

void TrainingLoop::AddReaderArgs(bool train, int64_t start_example, OperatorDef* op) const {
  const TrainingLoopOptions& o = options_;
  op->set_name(train ? "train_reader" : "test_reader");
  AddIntArg(op, "batch_size", train ? o.batch_size / o.world_size : test_batch_size_);
  if (o.world_size > 1) {
    AddIntArg(op, "num_shards", o.world_size);
    AddIntArg(op, "shard_id", o.rank);
  }
  AddIntArg(op, "shuffle", train ? 1 : 0);
  AddIntArg(op, "seed", static_cast<int64_t>(o.seed));
  AddIntArg(op, "start_example", start_example);
}

OperatorDef TrainingLoop::ReaderOp(bool train, int64_t start_example) const {
  const TrainingLoopOptions& o = options_;
  OperatorDef op;
  if (o.data == "lmdb") {
    op.set_type("TensorProtosDBInput");
    AddReaderArgs(train, start_example, &op);
    AddStringArg(&op, "db_type", o.db_type);
    AddStringArg(&op, "db", train ? o.db : o.test_db);
    if (db_images_uint8_) {
      AddFloatArg(&op, "mean", o.pixel_mean);
      AddFloatArg(&op, "std", o.pixel_std);
    }
    return op;
  }
  if (o.data == "source") {
    op.set_type("DataSourceInput");
    AddReaderArgs(train, start_example, &op);
    AddStringArg(&op, "source", (train ? train_source_ : test_source_)->name());
    return op;
  }
  op.set_type("IdxImageInput");
  AddReaderArgs(train, start_example, &op);
  AddFloatArg(&op, "mean", kPixelMean);
  AddFloatArg(&op, "std", kPixelStd);
  AddIntArg(&op, "channels", o.channels);
  AddIntArg(&op, "height", o.image_size);
  AddIntArg(&op, "width", o.image_size);
  AddIntArg(&op, "num_classes", o.num_classes);
  if (o.data == "synthetic") {
    AddIntArg(&op, "synthetic", 1);
    AddIntArg(&op, "synthetic_examples", train ? train_examples_ : test_examples_);
  } else {
    AddStringArg(&op, "images", IdxPath(o, train, "images-idx3"));
    AddStringArg(&op, "labels", IdxPath(o, train, "labels-idx1"));
  }
  return op;
}

float TrainingLoop::Step() {
  const Status status = train_net_->Run();
  if (!status.ok()) throw Error(status);
  ++iteration_;
  return DeviceMean(nets_.loss);
}

float TrainingLoop::DeviceMean(const std::string& blob) const {
  float sum = 0;
  for (int d = 0; d < nets_.num_devices(); ++d) {
    sum += FirstOnHost<float>(*workspace_->GetBlob(nets_.OnDevice(d, blob)));
  }
  return sum / static_cast<float>(nets_.num_devices());
}

void TrainingLoop::ShareRankZeroState() {
  // A sum in which every other rank contributes zeros: rank 0's values, exactly.
  for (const ParamInfo& p : nets_.params.params) {
    if (p.trainable()) continue;
    Tensor* t = workspace_->GetBlob(nets_.OnDevice(0, p.name));
    Tensor host;  // a device's state goes through host memory
    if (!t->device().is_host()) host.CopyFrom(*t);
    Tensor& shared = t->device().is_host() ? *t : host;
    float* values = shared.mutable_data<float>();
    if (options_.rank != 0) std::fill(values, values + shared.numel(), 0.f);
    const Status reduced = RequireProcessGroup()->AllreduceSum(
        values, static_cast<size_t>(shared.numel()), kStateTag, AllreduceAlgorithm::kRing);
    if (!reduced.ok()) throw Error(reduced);
    if (!t->device().is_host()) t->CopyFrom(host);
  }
}

Evaluation TrainingLoop::Evaluate() {
  const double start = NowSeconds();
  if (options_.world_size > 1) ShareRankZeroState();
  Evaluation e;
  const int64_t batches = test_examples_ / (test_batch_size_ * options_.world_size);
  for (int64_t i = 0; i < batches; ++i) {
    const Status status = test_net_->Run();
    if (!status.ok()) throw Error(status);
    e.accuracy +=
        FirstOnHost<float>(*test_workspace_->GetBlob(nets_.OnDevice(0, nets_.test_accuracy)));
    e.loss += FirstOnHost<float>(*test_workspace_->GetBlob(nets_.OnDevice(0, nets_.test_loss)));
  }
  if (options_.world_size > 1) {  // every rank's shard is the same size: the job's mean
    float sums[2] = {static_cast<float>(e.accuracy), static_cast<float>(e.loss)};
    const Status reduced =
        RequireProcessGroup()->AllreduceSum(sums, 2, kEvaluationTag, AllreduceAlgorithm::kRing);
    if (!reduced.ok()) throw Error(reduced);
    e.accuracy = sums[0];
    e.loss = sums[1];
  }
  e.accuracy /= static_cast<double>(batches * options_.world_size);
  e.loss /= static_cast<double>(batches * options_.world_size);
  e.examples = batches * test_batch_size_ * options_.world_size;
  e.seconds = NowSeconds() - start;
  return e;
}

void TrainingLoop::SaveCheckpoint(const std::string& path) const {
  if (options_.rank != 0) return;  // the ranks hold the same parameters: rank 0 writes them
  braid::SaveCheckpoint(*workspace_, nets_.CheckpointBlobs(), options_.model, path);
}

std::string TrainingLoop::Describe() const {
  const TrainingLoopOptions& o = options_;
  const OptimizerSpec& opt = o.optimizer;
  char line[512];
  std::snprintf(line, sizeof(line),
                "model %s (%lld trainable parameters), data %s (%lld train / %lld test images, "
                "%lldx%lldx%lld)"
                ", batch %lld, %lld iterations (%lld per epoch), starting at %lld; lr %s %g, %s, "
                "weight decay %g; executor %s",
                o.model.c_str(), static_cast<long long>(nets_.params.TrainableCount()),
                o.data.c_str(), static_cast<long long>(train_examples_),
                static_cast<long long>(test_examples_), static_cast<long long>(o.channels),
                static_cast<long long>(o.image_size), static_cast<long long>(o.image_size),
                static_cast<long long>(o.batch_size), static_cast<long long>(total_iterations_),
                static_cast<long long>(iterations_per_epoch_), static_cast<long long>(iteration_),
                opt.lr.policy.c_str(), opt.lr.base_lr, DescribeOptimizer(opt).c_str(),
                opt.weight_decay, o.executor.c_str());
  std::string text = line;
  const RecomputeBudgetReport& r = recompute_report_;
  if (r.budget_bytes > 0) {
    const auto mib = [](int64_t bytes) { return bytes / 1048576.0; };
    std::snprintf(line, sizeof(line),
                  "; recompute budget %.1f MiB: %d of %d convolutions recomputed, planned train "
                  "arena %.1f MiB per device (%.1f MiB without)%s",
                  mib(r.budget_bytes), r.convs, r.candidates, mib(r.arena_bytes),
                  mib(r.arena_without_bytes),
                  r.met ? "" : ", over the budget: the least the recomputation reached");
    text += line;
  }
  return text;
}

void TrainingLoop::LogProgress(std::ostream& log, double seconds, double loss_sum, double accuracy_sum,
                          int64_t iterations) const {
  // Adam and Adagrad take a negative rate (Caffe2's sign): report the descent's.
  const float lr = std::fabs(FirstOnHost<float>(*workspace_->GetBlob(nets_.OnDevice(0, nets_.lr))));
  char line[256];
  std::snprintf(
      line, sizeof(line), "iter %lld/%lld epoch %lld loss %.4f accuracy %.4f lr %.6g images/s %.1f",
      static_cast<long long>(iteration_), static_cast<long long>(total_iterations_),
      static_cast<long long>((iteration_ - 1) / iterations_per_epoch_ + 1), loss_sum / iterations,
      accuracy_sum / iterations, lr, iterations * options_.batch_size / seconds);
  log << line << std::endl;
  if (options_.on_progress) {
    TrainingProgress progress;
    progress.iteration = iteration_;
    progress.total_iterations = total_iterations_;
    progress.epoch = static_cast<int>((iteration_ - 1) / iterations_per_epoch_ + 1);
    progress.loss = loss_sum / iterations;
    progress.accuracy = accuracy_sum / iterations;
    progress.learning_rate = lr;
    progress.images_per_second = iterations * options_.batch_size / seconds;
    options_.on_progress(progress);
  }
}

void TrainingLoop::EndEpoch(std::ostream& log, Evaluation* last) {
  const long long epoch = (iteration_ + iterations_per_epoch_ - 1) / iterations_per_epoch_;
  if (options_.evaluate) {
    *last = Evaluate();
    char line[256];
    std::snprintf(
        line, sizeof(line), "epoch %lld test accuracy %.4f loss %.4f (%lld images, %.1f s)", epoch,
        last->accuracy, last->loss, static_cast<long long>(last->examples), last->seconds);
    log << line << std::endl;
    if (options_.on_progress) {
      TrainingProgress progress;
      progress.iteration = iteration_;
      progress.total_iterations = total_iterations_;
      progress.epoch = static_cast<int>(epoch);
      progress.evaluated = true;
      progress.test_accuracy = last->accuracy;
      progress.test_loss = last->loss;
      options_.on_progress(progress);
    }
  }
  if (!options_.checkpoint.empty()) {
    SaveCheckpoint(options_.checkpoint);
    log << "checkpoint " << options_.checkpoint << " saved at iter " << iteration_ << std::endl;
  }
}

namespace {

// "[#######.............] " for `done` of `total`.
std::string Bar(int64_t done, int64_t total) {
  constexpr int kWidth = 20;
  const int filled = static_cast<int>(kWidth * done / std::max<int64_t>(total, 1));
  return "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] ";
}

}  // namespace

void TrainingLoop::DrawProgressBar(std::ostream& log, double loss, double accuracy, int64_t run_iters,
                              double run_seconds) const {
  const double per_iter = run_seconds / std::max<int64_t>(run_iters, 1);
  const int64_t eta = static_cast<int64_t>(per_iter * (total_iterations_ - iteration_));
  char line[256];
  std::snprintf(line, sizeof(line),
                "\r%siter %lld/%lld loss %.4f accuracy %.4f images/s %.1f ETA %lld:%02lld   ",
                Bar(iteration_, total_iterations_).c_str(), static_cast<long long>(iteration_),
                static_cast<long long>(total_iterations_), loss, accuracy,
                options_.batch_size / per_iter, static_cast<long long>(eta / 60),
                static_cast<long long>(eta % 60));
  log << line << std::flush;
}

Evaluation TrainingLoop::Run(std::ostream& log) {
  log << Describe() << std::endl;
  Evaluation last;
  const double run_start = NowSeconds();
  const int64_t first_iteration = iteration_;
  double window_start = run_start, loss_sum = 0, accuracy_sum = 0, last_draw = 0;
  int64_t window = 0;
  while (iteration_ < total_iterations_) {
    const float loss = Step();
    const float accuracy = DeviceMean(nets_.accuracy);
    loss_sum += loss;
    accuracy_sum += accuracy;
    ++window;
    const double now = NowSeconds();
    const bool epoch_end =
        iteration_ % iterations_per_epoch_ == 0 || iteration_ == total_iterations_;
    if (options_.progress_bar && (now - last_draw > 0.2 || epoch_end)) {
      DrawProgressBar(log, loss, accuracy, iteration_ - first_iteration,
                      train_seconds_ + now - window_start);
      last_draw = now;
    }
    if (epoch_end || (!options_.progress_bar && iteration_ % options_.log_every == 0)) {
      if (options_.progress_bar) log << "\n";
      LogProgress(log, now - window_start, loss_sum, accuracy_sum, window);
      train_seconds_ += now - window_start;
      images_trained_ += window * options_.batch_size;
      loss_sum = accuracy_sum = 0;
      window = 0;
      if (epoch_end) EndEpoch(log, &last);
      window_start = NowSeconds();
    }
  }
  char line[160];
  std::snprintf(line, sizeof(line), "done: %lld iterations, %.1f s (%.1f s training)",
                static_cast<long long>(iteration_), NowSeconds() - run_start, train_seconds_);
  log << line << std::endl;
  if (trace_) {
    trace_->WriteFile(options_.trace);
    log << "trace of " << options_.traced_iterations << " iterations written to " << options_.trace
        << std::endl;
  }
  return last;
}

}  // namespace braid
