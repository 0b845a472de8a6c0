#include "tools/bench/training_rows.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>

#include "braid/status.h"
#include "runtime/core/autodiff.h"
#include "runtime/core/workspace.h"
#include "runtime/device/caching_allocator.h"
#include "runtime/exec/memory_planning.h"
#include "runtime/exec/net.h"
#include "runtime/exec/op_type_profile.h"
#include "runtime/models/data_parallel.h"
#include "runtime/models/resnet_training.h"
#include "runtime/models/training_footprint.h"
#include "runtime/models/training_nets.h"

namespace braid::bench {
namespace {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The reader serves a synthetic set of one batch's size, so the uint8 images it keeps are one
// batch (PyTorch's side of compare_pytorch.py keeps the same), and decodes one batch ahead on its
// own thread (PyTorch's side makes each batch in the loop): time enough, as even ResNet-20's
// iteration outlasts normalising a batch, and one batch buffer less (19 MB at 32x3x224x224).
OperatorDef SyntheticReader(const BenchRow& row, const std::string& name) {
  OperatorDef op =
      SyntheticImageReader({row.batch, row.channels, row.image_size, row.classes}, name);
  AddIntArg(&op, "prefetch", 1);
  AddFloatArg(&op, "mean", 0.5f);
  AddFloatArg(&op, "std", 0.25f);
  return op;
}

TrainingNets BuildNets(const BenchRow& row, const RowOptions& options) {
  TrainingNetsSpec nets_spec = ResNetNetsSpec(
      row.model, SyntheticImages{row.batch, row.channels, row.image_size, row.classes});
  nets_spec.train_input = SyntheticReader(row, "train_reader");
  nets_spec.test_input = SyntheticReader(row, "test_reader");
  // A fixed small rate keeps random-label training finite for any number of iterations.
  nets_spec.optimizer.lr.base_lr = 0.01f;
  nets_spec.recompute_bn_relu = options.recompute && options.memory_plan;  // see the TrainingLoop
  nets_spec.blocked_layouts = options.blocked_layouts;
  nets_spec.device = DeviceToProto(options.devices.at(0));
  const auto finish = [&options](TrainingNets* nets) {
    if (options.devices.size() > 1) {
      std::vector<DeviceOption> devices;
      for (const Device& device : options.devices) devices.push_back(DeviceToProto(device));
      *nets = ReplicateForDevices(*nets, devices);
    }
    for (NetDef* net : {&nets->train, &nets->test}) {
      net->set_type(options.executor);
      Argument* workers = net->add_arg();
      workers->set_name("num_workers");
      workers->set_i(options.threads);
    }
  };
  const bool budget = row.training && nets_spec.recompute_bn_relu;  // inference runs no train net
  return BuildTrainingNetsWithinArena(nets_spec, budget ? options.recompute_budget : 0, finish,
                                      nullptr);
}

// The ops of `init` that create a blob `net` reads: inference needs no momenta or counter.
// Blobs read after the run stay out of the arena: the losses and accuracies, the learning rate
// and the iteration counter.
std::unique_ptr<NetMemory> PlanMemory(const BenchRow& row, const TrainingNets& nets, Net* net,
                                      Workspace* ws) {
  MemoryPlanOptions plan;
  plan.mode = row.training ? PlanMode::kTraining : PlanMode::kInference;
  plan.share_activations = row.training;
  plan.share_parameter_gradients = row.training;
  for (int d = 0; d < nets.num_devices(); ++d) {
    for (const std::string& blob : {nets.loss, nets.accuracy, nets.lr, nets.iter, nets.test_loss,
                                    nets.test_accuracy}) {
      plan.keep.insert(nets.OnDevice(d, blob));
    }
  }
  return PlanNetMemory(*net, ws, plan);
}

NetDef InitNetFor(const NetDef& init, const NetDef& net) {
  std::set<std::string> read;
  for (const OperatorDef& op : net.op()) read.insert(op.input().begin(), op.input().end());
  NetDef kept = init;
  kept.clear_op();
  for (const OperatorDef& op : init.op()) {
    const bool needed = std::any_of(op.output().begin(), op.output().end(),
                                    [&](const std::string& out) { return read.count(out) > 0; });
    if (needed) *kept.add_op() = op;
  }
  return kept;
}

void RunOrThrow(Net* net) {
  const Status status = net->Run();
  if (!status.ok()) throw Error(status);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Timed iterations until min_iters and min_seconds are both reached, or max_iters.
std::vector<double> TimeIterations(Net* net, const RowOptions& o) {
  std::vector<double> seconds;
  double total = 0;
  while (static_cast<int>(seconds.size()) < o.max_iters &&
         (static_cast<int>(seconds.size()) < o.min_iters || total < o.min_seconds)) {
    const double start = NowSeconds();
    RunOrThrow(net);
    seconds.push_back(NowSeconds() - start);
    total += seconds.back();
  }
  return seconds;
}

void CountBlobBytes(const Workspace& ws, const NetDef& init, RowTiming* t) {
  std::set<std::string> made_by_init;
  for (const OperatorDef& op : init.op()) {
    made_by_init.insert(op.output().begin(), op.output().end());
  }
  std::set<const void*> counted;
  for (const std::string& name : ws.LocalBlobNames()) {
    const Tensor* tensor = ws.GetBlob(name);
    if (!tensor->storage() || !counted.insert(tensor->storage().get()).second) continue;
    const auto bytes = static_cast<int64_t>(tensor->capacity());
    if (made_by_init.count(name)) {
      t->param_bytes += bytes;
    } else if (std::string of; GradientNameOf(name, &of)) {
      t->gradient_bytes += bytes;
    } else {
      t->activation_bytes += bytes;
    }
  }
}

}  // namespace

std::string BenchRow::name() const { return model + "-b" + std::to_string(batch) + "-" + mode(); }

std::string BenchRow::input() const {
  const std::string side = std::to_string(image_size);
  return std::to_string(channels) + "x" + side + "x" + side;
}

const std::vector<BenchRow>& BenchRows() {
  static const auto* rows = [] {
    auto* all = new std::vector<BenchRow>;
    const BenchRow shapes[] = {{"resnet20", 1, 28, 64, 10},
                               {"resnet18", 3, 224, 8, 1000},
                               {"resnet18", 3, 224, 32, 1000},
                               {"resnet50", 3, 224, 1, 1000},
                               {"resnet50", 3, 224, 8, 1000},
                               {"resnet50", 3, 224, 32, 1000}};
    for (const BenchRow& shape : shapes) {
      for (bool training : {true, false}) {
        BenchRow row = shape;
        row.training = training;
        all->push_back(row);
      }
    }
    return all;
  }();
  return *rows;
}

const BenchRow* FindBenchRow(const std::string& name) {
  for (const BenchRow& row : BenchRows()) {
    if (row.name() == name) return &row;
  }
  return nullptr;
}

RowTiming RunBenchRow(const BenchRow& row, const RowOptions& options) {
  const double setup_start = NowSeconds();
  const TrainingNets nets = BuildNets(row, options);
  const NetDef& def = row.training ? nets.train : nets.test;
  OpTypeProfile profile;  // outlives the net that reports to it
  Workspace ws;
  const NetDef init_net = InitNetFor(nets.params.init_net, def);
  const Status init = ws.RunNetOnce(init_net);
  if (!init.ok()) throw Error(init);
  Net* net = ws.CreateNet(def);
  std::unique_ptr<NetMemory> memory;
  if (options.memory_plan) memory = PlanMemory(row, nets, net, &ws);
  for (int i = 0; i < options.warmup; ++i) RunOrThrow(net);
  CachingAllocator* device = CachingAllocatorOf(options.devices.at(0));
  int64_t warmup_peak_reserved = 0;
  if (device != nullptr) {
    warmup_peak_reserved = device->stats().peak_bytes_reserved;
    device->ResetPeakStats();
  }

  RowTiming t;
  t.trainable_params = nets.params.TrainableCount();
  t.setup_seconds = NowSeconds() - setup_start;
  if (options.profile) net->AddObserver(&profile);
  const std::vector<double> seconds = TimeIterations(net, options);
  t.iterations = static_cast<int>(seconds.size());
  for (double s : seconds) t.seconds += s;
  t.median_seconds = Median(seconds);
  t.images_per_second = static_cast<double>(row.batch) / t.median_seconds;
  Tensor loss;  // from its device
  loss.CopyFrom(*ws.GetBlob(nets.OnDevice(0, row.training ? nets.loss : nets.test_loss)));
  t.loss = loss.data<float>()[0];
  if (options.profile) t.profile = profile.Table();
  CountBlobBytes(ws, init_net, &t);
  if (memory != nullptr) t.arena_bytes = memory->allocated_bytes();
  t.scratch_bytes = static_cast<int64_t>(net->scratch_bytes());
  if (device != nullptr) {
    t.device_peak_in_use_bytes = device->stats().peak_bytes_in_use;
    t.device_peak_reserved_bytes = device->stats().peak_bytes_reserved;
    t.device_warmup_peak_reserved_bytes = warmup_peak_reserved;
  }
  return t;
}

int64_t PeakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports kilobytes
}

}  // namespace braid::bench
