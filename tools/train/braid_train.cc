// braid_train: trains a ResNet image classifier on one device.
//
//   braid_train [--model resnet20] [--data fashion-mnist|synthetic] [--batch-size 64]
//               [--epochs 3 | --iters N] [--lr 0.1] [--lr-policy cosine|step|fixed]
//               [--momentum 0.9] [--weight-decay 1e-4] [--executor simple|dag] [--threads N]
//               [--checkpoint PATH [--resume]] [--seed 1] [--dump-nets DIR] [--memory-plan on|off]
//
// Flag names take dashes or underscores (--batch-size or --batch_size). Prints one line per
// --log-every iterations (loss, accuracy, learning rate, images/s) and, after each epoch, the test
// set's accuracy. Exit codes: 0 success, 1 training failed (its Status on one stderr line), 2 bad
// flags.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "runtime/proto_io.h"
#include "runtime/status.h"
#include "tools/command_line.h"
#include "tools/models/model_builder.h"
#include "tools/plan_summary.h"
#include "tools/train/trainer.h"

DEFINE_string(model, "resnet20", "resnet20|resnet32|resnet56 (CIFAR style) or resnet18|34|50");
DEFINE_string(data, "fashion-mnist", "fashion-mnist or synthetic");
DEFINE_string(data_dir, "/usr/share/datasets/fashion-mnist", "Fashion-MNIST's IDX files");
DEFINE_int64(batch_size, 64, "training batch size");
DEFINE_int64(test_batch_size, 100, "evaluation batch size (lowered to divide the test set)");
DEFINE_int32(epochs, 3, "epochs to train (unless --iters)");
DEFINE_int64(iters, 0, "iterations to train instead of --epochs");
DEFINE_double(lr, 0.1, "base learning rate");
DEFINE_string(lr_policy, "cosine", "fixed, step (x gamma every --lr-step) or cosine (to 0)");
DEFINE_int64(lr_step, 0, "step policy: iterations between decays (0: one epoch)");
DEFINE_double(lr_gamma, 0.1, "step policy: decay factor");
DEFINE_double(momentum, 0.9, "SGD momentum");
DEFINE_bool(nesterov, false, "Nesterov momentum");
DEFINE_double(weight_decay, 1e-4, "weight decay of conv and FC weights");
DEFINE_string(executor, "simple", "simple or dag");
DEFINE_int32(threads, 0, "dag executor workers (0: hardware threads)");
DEFINE_string(checkpoint, "", "checkpoint file (.pb binary), saved after every epoch");
DEFINE_bool(resume, false, "resume from --checkpoint");
DEFINE_uint64(seed, 1, "seed of the data order (parameter fills are seeded by their names)");
DEFINE_int32(log_every, 50, "iterations between log lines");
DEFINE_bool(eval, true, "evaluate on the test set after every epoch");
DEFINE_int64(synthetic_examples, 1024, "synthetic data: training images");
DEFINE_int64(image_size, 28, "synthetic data: image height and width");
DEFINE_int64(channels, 1, "synthetic data: image channels");
DEFINE_int64(classes, 10, "synthetic data: classes");
DEFINE_string(memory_plan, "on",
              "on: plan the train net's gradients and activations into one arena that the test "
              "net shares (runtime/memory_planning.h); off: every blob keeps its own storage");
DEFINE_string(dump_nets, "", "write the init, train and test nets as .pbtxt into this directory");

namespace braid {
namespace {

TrainerOptions OptionsFromFlags() {
  TrainerOptions o;
  o.model = FLAGS_model;
  o.data = FLAGS_data;
  o.data_dir = FLAGS_data_dir;
  o.synthetic_examples = FLAGS_synthetic_examples;
  o.synthetic_test_examples = std::min<int64_t>(FLAGS_synthetic_examples, 512);
  o.image_size = FLAGS_image_size;
  o.channels = FLAGS_channels;
  o.num_classes = FLAGS_classes;
  o.batch_size = FLAGS_batch_size;
  o.test_batch_size = FLAGS_test_batch_size;
  o.epochs = FLAGS_epochs;
  o.iters = FLAGS_iters;
  o.optimizer.lr.policy = FLAGS_lr_policy;
  o.optimizer.lr.base_lr = static_cast<float>(FLAGS_lr);
  o.optimizer.lr.stepsize = FLAGS_lr_step;
  o.optimizer.lr.gamma = static_cast<float>(FLAGS_lr_gamma);
  o.optimizer.momentum = static_cast<float>(FLAGS_momentum);
  o.optimizer.nesterov = FLAGS_nesterov;
  o.optimizer.weight_decay = static_cast<float>(FLAGS_weight_decay);
  o.executor = FLAGS_executor;
  o.threads = FLAGS_threads;
  o.checkpoint = FLAGS_checkpoint;
  o.resume = FLAGS_resume;
  o.seed = FLAGS_seed;
  o.log_every = FLAGS_log_every;
  o.evaluate = FLAGS_eval;
  o.memory_plan = FLAGS_memory_plan == "on";
  return o;
}

void DumpNets(const TrainingNets& nets, const std::string& dir) {
  std::filesystem::create_directories(dir);
  SaveProto(nets.params.init_net, dir + "/" + nets.params.init_net.name() + ".pbtxt");
  SaveProto(nets.train, dir + "/" + nets.train.name() + ".pbtxt");
  SaveProto(nets.test, dir + "/" + nets.test.name() + ".pbtxt");
  std::cout << "nets written to " << dir << "\n";
}

void Train(const TrainerOptions& options) {
  Trainer trainer(options);
  if (!FLAGS_dump_nets.empty()) DumpNets(trainer.nets(), FLAGS_dump_nets);
  if (trainer.train_memory() != nullptr) {
    std::cout << "train net " << PlanSummaryLine(trainer.train_memory()->plan()) << "\n"
              << "test net: " << HumanBytes(trainer.test_memory()->plan().arena_bytes())
              << " planned alone, " << HumanBytes(trainer.test_memory()->allocated_bytes())
              << " allocated beyond the train net's arena\n";
  }
  trainer.Run(std::cout);
}

}  // namespace
}  // namespace braid

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  const std::vector<std::string> positional = braid::ParseCommandLine(
      argc, argv,
      "braid_train [--model resnet20] [--data fashion-mnist|synthetic] [--batch-size 64] "
      "[--epochs 3|--iters N] [--lr 0.1] [--lr-policy cosine|step|fixed] [--momentum 0.9] "
      "[--weight-decay 1e-4] [--executor simple|dag] [--threads N] [--checkpoint PATH] "
      "[--resume] [--seed 1] [--memory-plan on|off]");
  if (FLAGS_memory_plan != "on" && FLAGS_memory_plan != "off") {
    std::cerr << "braid_train: --memory-plan must be 'on' or 'off', got '" << FLAGS_memory_plan
              << "'\n";
    return braid::kExitBadFlags;
  }
  if (!positional.empty()) {
    std::cerr << "braid_train: unexpected argument '" << positional[0] << "'\n"
              << gflags::ProgramUsage() << "\n";
    return braid::kExitBadFlags;
  }
  const braid::Status status =
      braid::StatusFromCall([] { braid::Train(braid::OptionsFromFlags()); });
  std::cout.flush();
  if (!status.ok()) {
    std::string text = status.ToString();
    for (char& c : text) c = c == '\n' ? ' ' : c;
    std::cerr << text << "\n";
    return status.code() == braid::StatusCode::kInvalidArgument &&
                   text.find("braid_train:") != std::string::npos
               ? braid::kExitBadFlags
               : 1;
  }
  return 0;
}
