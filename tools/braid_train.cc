// braid_train: trains a ResNet image classifier on one device or data parallel on several; a
// command over braid::Trainer (include/braid/trainer.h), whose options its flags set.
//
//   braid_train [--model resnet20] [--data fashion-mnist|lmdb|synthetic] [--devices cpu:0,cpu:1]
//               [--db TRAIN_DB --test-db TEST_DB]
//               [--batch-size 64] [--epochs 3 | --iters N] [--lr 0.1]
//               [--lr-policy cosine|step|fixed] [--momentum 0.9] [--weight-decay 1e-4]
//               [--executor simple|dag] [--threads N] [--memory-plan on|off]
//               [--recompute-budget SIZE] [--checkpoint PATH [--resume]] [--trace FILE] [--seed 1] [--dump-nets DIR]
//               [--init-on-host=false]
//               [--device-memory 16G] [--algo-cache PATH]
//
// --data lmdb trains from DBs of Caffe2 TensorProtos records (--db, --test-db; written by
// braid_make_db, e.g. from Fashion-MNIST's IDX files, which then trains to the numbers of
// --data fashion-mnist for the same --seed): an image (uint8 or float32 [C,S,S]) and an int32
// label below --classes per record.
//
// Random parameter fills run on the host and are copied to the devices (--init-on-host, on by
// default), so --devices cuda:0 and --devices cpu:0 start from the same weights for one seed.
//
// --devices sim:0,sim:1 trains on simulated GPUs (runtime/device/sim/sim_device.h): parameters,
// gradients, activations and the planned arenas live in their memory (--device-memory each), the
// reader runs on the host and each device's slice of the batch is copied to it; the trace shows
// every stream as a track.
//
// --recompute-budget 1.2G runs some convolutions again in the backward pass, chosen by planning
// (runtime/models/training_footprint.h), until each device's planned train arena fits 1.2 GiB;
// the run's first line says how many and the arena with and without.
//
// Flag names take dashes or underscores (--batch-size or --batch_size). On a terminal a progress
// line (iteration, loss, accuracy, images/s, ETA) is redrawn in place; otherwise one log line per
// --log-every iterations. After each epoch: the test set's accuracy. At the end a summary:
// images/s, test accuracy, each device's naive / planned / lower-bound bytes, the test net's extra
// bytes with and without sharing the train net's arena, the nets' scratch areas (ops' temporary
// buffers), each sim device's peak memory and peak resident memory, and the algorithm searches
// made (Conv times direct against Winograd per shape; --algo-cache PATH loads the choices from PATH
// when it exists and saves them there, so a second run makes none). --batch-size is
// the global batch, split evenly across --devices. Exit codes: 0 success, 1 training failed (its
// Status on one stderr line), 2 bad flags, an unknown model, missing data files or an unusable
// device list.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "braid/process_group.h"
#include "braid/status.h"
#include "braid/trainer.h"
#include "runtime/core/device.h"
#include "runtime/device/caching_allocator.h"
#include "runtime/device/sim/sim_device.h"
#include "runtime/io/proto_io.h"
#include "tools/algorithm_cache.h"
#include "tools/command_line.h"
#include "tools/plan_summary.h"
#include "tools/training_report.h"

DEFINE_string(model, "resnet20", "resnet20|resnet32|resnet56 (CIFAR style) or resnet18|34|50");
DEFINE_string(data, "fashion-mnist", "fashion-mnist, lmdb or synthetic");
DEFINE_string(db, "", "lmdb data: the training set's DB (braid_make_db writes one)");
DEFINE_string(test_db, "", "lmdb data: the test set's DB");
DEFINE_string(db_type, "lmdb", "lmdb data: the DBs' type");
DEFINE_string(data_dir, "/usr/share/datasets/fashion-mnist", "Fashion-MNIST's IDX files");
DEFINE_int64(batch_size, 64, "training batch size");
DEFINE_int64(test_batch_size, 100, "evaluation batch size (lowered to divide the test set)");
DEFINE_int32(epochs, 3, "epochs to train (unless --iters)");
DEFINE_int64(iters, 0, "iterations to train instead of --epochs");
DEFINE_double(lr, 0.1, "base learning rate");
DEFINE_string(lr_policy, "cosine",
              "cosine (to 0), step (x gamma every --lr-step), multistep (x gamma at each of "
              "--lr-milestones), exp (gamma^t), inv ((1 + gamma t)^-power), poly ((1 - t/T)^power) "
              "or fixed");
DEFINE_int64(lr_step, 0, "step policy: iterations between decays (0: one epoch)");
DEFINE_string(lr_milestones, "",
              "multistep policy: iterations where the rate is x gamma (1000,2000)");
DEFINE_double(lr_gamma, 0.1, "step, multistep, exp, inv policies: the factor");
DEFINE_double(lr_power, 1.0, "inv and poly policies: the power");
DEFINE_string(optimizer, "momentum", "momentum (SGD), adam, adamw or adagrad");
DEFINE_double(momentum, 0.9, "SGD momentum");
DEFINE_bool(nesterov, false, "Nesterov momentum");
DEFINE_double(beta1, 0.9, "adam, adamw: first moment's decay");
DEFINE_double(beta2, 0.999, "adam, adamw: second moment's decay");
DEFINE_double(epsilon, 1e-8, "adam, adamw, adagrad: added to the root of the second moment");
DEFINE_double(weight_decay, 1e-4, "weight decay of conv and FC weights");
DEFINE_string(executor, "simple", "simple or dag");
DEFINE_int32(threads, 0, "dag executor workers (0: hardware threads)");
DEFINE_string(checkpoint, "", "checkpoint file (.pb binary), saved after every epoch");
DEFINE_bool(resume, false, "resume from --checkpoint");
DEFINE_uint64(seed, 1, "seed of the data order (parameter fills are seeded by their names)");
DEFINE_bool(init_on_host, true,
            "fill random parameters on the host and copy them to the devices, so cuda starts from "
            "the weights cpu and sim start from (false: cuda fills with cuRAND, other values)");
DEFINE_int32(log_every, 50, "iterations between log lines");
DEFINE_bool(eval, true, "evaluate on the test set after every epoch");
DEFINE_int64(synthetic_examples, 1024, "synthetic data: training images");
DEFINE_int64(image_size, 28, "synthetic data: image height and width");
DEFINE_int64(channels, 1, "synthetic data: image channels");
DEFINE_int64(classes, 10, "synthetic and lmdb data: classes");
DEFINE_string(devices, "cpu:0",
              "devices to train on, data parallel when several: cpu:0,cpu:1, cuda:0,cuda:1 or "
              "sim:0,sim:1 (simulated GPUs); the batch is split evenly across them");
DEFINE_int32(intra_op_threads, 0,
             "each op's OpenMP team (0: from the ops that may run beside it); fix it to compare "
             "runs on different device layouts bit for bit");
DEFINE_int32(rank, 0, "this process's rank in a multi-process job (braid_launch sets it)");
DEFINE_int32(world_size, 1, "processes in the job; > 1 needs --rendezvous");
DEFINE_string(rendezvous, "",
              "where the ranks meet: file:///shared/dir or redis://HOST:PORT (Gloo's stores)");
DEFINE_string(job_name, "braid", "the job's key prefix in the rendezvous store");
DEFINE_string(hostname, "", "address this rank binds for Gloo (default: loopback)");
DEFINE_int32(rendezvous_timeout, 60,
             "seconds to wait for every rank, and for any collective, before failing");
DEFINE_string(allreduce_algorithm, "ring",
              "cross-process all-reduce: ring or halving_doubling");
DEFINE_string(cross_process_allreduce, "gloo",
              "how cuda devices all-reduce across processes: gloo (through host copies) or nccl");
DEFINE_double(allreduce_bucket_mib, 1.0,
              "cross-process all-reduce: gradients per collective, at most this many MiB "
              "(0: one collective per gradient)");
DEFINE_string(trace, "",
              "write a Chrome trace (Perfetto, chrome://tracing) of the first 10 "
              "training iterations to this file");
DEFINE_string(memory_plan, "on",
              "on: plan the train net's gradients and activations into one arena that the test "
              "net shares (runtime/exec/memory_planning.h); off: every blob keeps its own storage");
DEFINE_string(recompute_budget, "",
              "with --memory-plan on: also recompute, in the backward pass, convolutions chosen "
              "by planning to bring each device's planned train arena within this size (e.g. "
              "1.2G; runtime/models/training_footprint.h); the run's first line says how many");
DEFINE_string(algo_cache, "",
              "algorithm choices (runtime/device/algorithm_registry.h): loaded from this file at start "
              "when it exists, saved to it at exit; a second run makes no searches");
DEFINE_string(export, "",
              "after training, write the model as a Caffe2 model-zoo folder here (init_net.pb, "
              "predict_net.pb, value_info.json) for braid_run --model-dir; rank 0 only");
DEFINE_string(dump_nets, "", "write the init, train and test nets as .pbtxt into this directory");
DEFINE_string(summary_json, "",
              "write the run's figures as JSON to this file (tools/training_report.h): the losses "
              "of every log line, the evaluation, and each device's allocator figures");

namespace braid {
namespace {


TrainerOptions OptionsFromFlags() {
  TrainerOptions o;
  o.model = FLAGS_model;
  o.data = FLAGS_data;
  o.data_dir = FLAGS_data_dir;
  o.synthetic.examples = FLAGS_synthetic_examples;
  o.synthetic.test_examples = std::min<int64_t>(FLAGS_synthetic_examples, 512);
  o.synthetic.image_size = FLAGS_image_size;
  o.synthetic.channels = FLAGS_channels;
  o.synthetic.classes = FLAGS_classes;
  o.db.train = FLAGS_db;
  o.db.test = FLAGS_test_db;
  o.db.type = FLAGS_db_type;
  o.db.classes = FLAGS_classes;
  o.devices.clear();
  for (const Device& device : ParseDeviceList(FLAGS_devices, "braid_train", "--devices")) {
    o.devices.push_back(device.ToString());
  }
  o.batch_size = FLAGS_batch_size;
  o.test_batch_size = FLAGS_test_batch_size;
  o.epochs = FLAGS_epochs;
  o.iterations = FLAGS_iters;
  o.learning_rate = FLAGS_lr;
  o.learning_rate_policy.policy = FLAGS_lr_policy;
  o.learning_rate_policy.step_iterations = FLAGS_lr_step;
  o.learning_rate_policy.milestones = ParseIntList(FLAGS_lr_milestones, "--lr-milestones");
  o.learning_rate_policy.gamma = FLAGS_lr_gamma;
  o.learning_rate_policy.power = FLAGS_lr_power;
  o.optimizer = {FLAGS_optimizer, FLAGS_beta1, FLAGS_beta2, FLAGS_epsilon};
  o.momentum = FLAGS_momentum;
  o.nesterov = FLAGS_nesterov;
  o.weight_decay = FLAGS_weight_decay;
  o.seed = FLAGS_seed;
  o.init_on_host = FLAGS_init_on_host;
  o.evaluate = FLAGS_eval;
  o.checkpoint = FLAGS_checkpoint;
  o.resume = FLAGS_resume;
  o.memory_plan = FLAGS_memory_plan == "on";
  o.progress_every = FLAGS_log_every;
  o.execution.executor = FLAGS_executor;
  o.execution.threads = FLAGS_threads;
  o.execution.intra_op_threads = FLAGS_intra_op_threads;
  o.execution.trace = FLAGS_trace;
  o.execution.recompute_budget = ParseBudget(FLAGS_recompute_budget, "--recompute-budget");
  o.log.stream = &std::cout;
  // On a terminal, or under braid_launch, which shows rank 0's progress line on its terminal.
  const char* launched_progress = std::getenv("BRAID_PROGRESS");
  o.log.progress_bar = isatty(STDOUT_FILENO) != 0 ||
                       (launched_progress != nullptr && std::string(launched_progress) == "1");
  o.processes.rank = FLAGS_rank;
  o.processes.world_size = FLAGS_world_size;
  o.processes.allreduce_algorithm = FLAGS_allreduce_algorithm;
  o.processes.allreduce_bucket_bytes =
      static_cast<int64_t>(FLAGS_allreduce_bucket_mib * (1 << 20));
  o.processes.nccl = FLAGS_cross_process_allreduce == "nccl";
  return o;
}

// Joins the job's other ranks (world_size > 1) and installs the group the Trainer's all-reduces
// use.
void ConnectProcesses(const TrainerProcesses& processes) {
  if (processes.world_size <= 1) return;
  if (FLAGS_rendezvous.empty()) {
    throw Error(Status::InvalidArgument("braid_train: --world_size " +
                                        std::to_string(processes.world_size) +
                                        " needs --rendezvous"));
  }
  ProcessGroupOptions options;
  options.rank = processes.rank;
  options.world_size = processes.world_size;
  options.rendezvous = FLAGS_rendezvous;
  options.job_name = FLAGS_job_name;
  options.hostname = FLAGS_hostname;
  options.timeout = std::chrono::seconds(FLAGS_rendezvous_timeout);
  const Status connected = ConnectProcessGroup(options);
  if (!connected.ok()) throw Error(connected);
}

void DumpNets(const Trainer& trainer, const std::string& dir) {
  std::filesystem::create_directories(dir);
  for (const NetDef* net : {&trainer.init_net(), &trainer.train_net(), &trainer.test_net()}) {
    SaveProto(*net, dir + "/" + net->name() + ".pbtxt");
  }
  std::cout << "nets written to " << dir << "\n";
}

// Peak resident set size of this process, in bytes.
int64_t PeakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

// The device's caching allocator (runtime/device/caching_allocator.h): what it hands out and holds.
void PrintAllocatorStats(const Device& device) {
  const CachingAllocator* allocator = CachingAllocatorOf(device);
  if (allocator == nullptr) return;
  const AllocatorStats a = allocator->stats();
  std::printf("  %-8s allocator  in use %s (peak %s), reserved %s (peak %s), %lld raw allocations, "
              "%lld raw frees, largest free block %s, fragmentation %.0f%%\n",
              device.ToString().c_str(), HumanBytes(a.bytes_in_use).c_str(),
              HumanBytes(a.peak_bytes_in_use).c_str(), HumanBytes(a.bytes_reserved).c_str(),
              HumanBytes(a.peak_bytes_reserved).c_str(), static_cast<long long>(a.raw_allocations),
              static_cast<long long>(a.raw_frees), HumanBytes(a.largest_free_block).c_str(),
              100.0 * a.fragmentation());
}

void PrintMemory(const TrainingSummary& summary) {
  if (summary.arenas.empty()) return;  // --memory-plan off
  std::printf("  %-8s %14s %14s %14s\n", "device", "naive", "planned", "lower bound");
  for (const TrainingSummary::Arena& arena : summary.arenas) {
    std::printf("  %-8s %14s %14s %14s\n", arena.device.c_str(),
                HumanBytes(arena.naive_bytes).c_str(), HumanBytes(arena.planned_bytes).c_str(),
                HumanBytes(arena.lower_bound_bytes).c_str());
  }
  // What the test net needs alone, and what it adds by growing the train net's arenas.
  const int64_t alone = summary.test_net_alone_bytes;
  const int64_t extra = summary.test_net_extra_bytes;
  std::printf("  test net extra     %s shared, %s alone (%.0f%% less)\n",
              HumanBytes(extra).c_str(), HumanBytes(alone).c_str(),
              alone > 0 ? 100.0 * (alone - extra) / alone : 0.0);
}

void PrintSummary(const Trainer& trainer, const TrainerOptions& options,
                  const TrainingProgress& last, const AlgorithmCache& algorithms) {
  const TrainingSummary summary = trainer.Summary();
  std::printf("\nsummary: %s on %s, executor %s\n", options.model.c_str(), FLAGS_devices.c_str(),
              options.execution.executor.c_str());
  std::printf("  training images/s  %.1f\n", summary.images_per_second);
  if (options.evaluate) std::printf("  test accuracy      %.4f\n", last.test_accuracy);
  PrintMemory(summary);
  std::printf("  scratch areas      %s train, %s test\n",
              HumanBytes(summary.train_scratch_bytes).c_str(),
              HumanBytes(summary.test_scratch_bytes).c_str());
  for (const std::string& name : options.devices) {
    const Device device = ParseDevice(name);
    if (device.is_host()) continue;
    if (device.type == DeviceType::kSim) {
      const SimDeviceStats stats = SimDevice::Get(device.id)->stats();
      std::printf("  %-8s memory     %s peak of %s, %lld kernels\n", device.ToString().c_str(),
                  HumanBytes(stats.peak_bytes_in_use).c_str(),
                  HumanBytes(SimDevice::Get(device.id)->capacity_bytes()).c_str(),
                  static_cast<long long>(stats.kernels_launched));
    }
    PrintAllocatorStats(device);  // cuda: the caching allocator's peak, to set beside braid_plan's
  }
  std::printf("  peak resident      %s\n", HumanBytes(PeakResidentBytes()).c_str());
  std::printf("  %s\n", algorithms.SummaryLine().c_str());
}

void Train(TrainerOptions options) {
  TrainingReport report(options.devices);
  if (!FLAGS_summary_json.empty()) {
    options.on_progress = [&report](const TrainingProgress& p) { report.OnProgress(p); };
  }
  ConnectProcesses(options.processes);
  AlgorithmCache algorithms(FLAGS_algo_cache);
  std::unique_ptr<Trainer> trainer;
  Status status = Trainer::Create(options, &trainer);
  if (status.code() == StatusCode::kInvalidArgument) {  // options from flags: bad flags
    const std::string prefix = "trainer: ";
    std::string message = status.message();
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    throw Error(Status::InvalidArgument("braid_train: " + message));
  }
  if (!status.ok()) throw Error(status);
  if (!FLAGS_dump_nets.empty()) DumpNets(*trainer, FLAGS_dump_nets);
  TrainingProgress last;
  status = trainer->Run(&last);
  if (!status.ok()) throw Error(status);
  algorithms.Save();
  if (!FLAGS_export.empty() && options.processes.rank == 0) {
    status = trainer->Export(FLAGS_export);
    if (!status.ok()) throw Error(status);
    std::printf("exported the model to %s\n", FLAGS_export.c_str());
  }
  PrintSummary(*trainer, options, last, algorithms);
  if (!FLAGS_summary_json.empty()) report.Write(FLAGS_summary_json, *trainer, options, last);
}

}  // namespace
}  // namespace braid

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  const std::vector<std::string> positional = braid::ParseCommandLine(
      argc, argv,
      "braid_train [--model resnet20] [--data fashion-mnist|lmdb|synthetic] [--db DB --test-db DB] "
      "[--devices cpu:0,cpu:1] "
      "[--batch-size 64] "
      "[--epochs 3|--iters N] [--lr 0.1] [--lr-policy cosine|step|multistep|exp|inv|poly|fixed] "
      "[--optimizer momentum|adam|adamw|adagrad] [--momentum 0.9] [--export DIR] "
      "[--weight-decay 1e-4] [--executor simple|dag] [--threads N] [--checkpoint PATH] "
      "[--resume] [--seed 1] [--memory-plan on|off] [--recompute-budget SIZE]");
  if (FLAGS_memory_plan != "on" && FLAGS_memory_plan != "off") {
    std::cerr << "braid_train: --memory-plan must be 'on' or 'off', got '" << FLAGS_memory_plan
              << "'\n";
    return braid::kExitBadFlags;
  }
  int64_t budget = 0;
  const braid::Status budget_parsed = braid::StatusFromCall(
      [&] { budget = braid::ParseBudget(FLAGS_recompute_budget, "--recompute-budget"); });
  if (!budget_parsed.ok() || (budget > 0 && FLAGS_memory_plan != "on")) {
    std::cerr << "braid_train: "
              << (budget_parsed.ok() ? "--recompute-budget needs --memory-plan on (without a "
                                       "plan, recomputing saves no memory)"
                                     : budget_parsed.message())
              << "\n";
    return braid::kExitBadFlags;
  }
  if (FLAGS_cross_process_allreduce != "gloo" && FLAGS_cross_process_allreduce != "nccl") {
    std::cerr << "braid_train: --cross_process_allreduce must be 'gloo' or 'nccl', got '"
              << FLAGS_cross_process_allreduce << "'\n";
    return braid::kExitBadFlags;
  }
  if (!positional.empty()) {
    std::cerr << "braid_train: unexpected argument '" << positional[0] << "'\n"
              << gflags::ProgramUsage() << "\n";
    return braid::kExitBadFlags;
  }
  return braid::RunTool("braid_train", [] { braid::Train(braid::OptionsFromFlags()); });
}
