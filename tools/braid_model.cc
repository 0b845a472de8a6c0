// braid_model: writes a ResNet classifier's init, train and test nets as text NetDefs, so that
// braid_plan and braid_run can be pointed at real graphs without training anything.
//
//   braid_model --model resnet20|resnet32|...|resnet50|... --batch-size B --out-dir DIR
//               [--image-size S] [--channels C] [--classes K] [--executor dag|simple]
//
// The nets are BuildTrainingNets' (runtime/models/training_nets.h) around AddResNet
// (runtime/models/resnet.h), reading synthetic batches (IdxImageInput synthetic=1, so no data files
// are needed and shape inference knows the batch's shape). Image size, channels and classes
// default to 28, 1 and 10 for CIFAR-style models and 224, 3 and 1000 for ImageNet-style ones. It
// writes DIR/init.pbtxt, DIR/train.pbtxt (forward, loss, gradients, SGD updates) and
// DIR/test.pbtxt (forward with is_test=1, blobs prefixed "test/"); the losses and accuracies are
// the nets' external outputs. E.g.
//
//   braid_plan DIR/train.pbtxt --init DIR/init.pbtxt --mode training --share-activations
//   braid_run DIR/test.pbtxt --init DIR/init.pbtxt --memory-plan on
//
// Exit codes: 0 success, 1 a failure (its Status on one stderr line), 2 bad flags.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "braid/status.h"
#include "runtime/io/proto_io.h"
#include "runtime/models/resnet.h"
#include "runtime/models/resnet_training.h"
#include "runtime/models/training_nets.h"
#include "tools/command_line.h"

DEFINE_string(model, "resnet20",
              "resnet20|resnet32|resnet56|... (CIFAR) or resnet18|34|50|101|152");
DEFINE_int64(batch_size, 64, "images per batch (train and test nets)");
DEFINE_int64(image_size, 0, "image height and width (0: 28 CIFAR-style, 224 ImageNet-style)");
DEFINE_int64(channels, 0, "image channels (0: 1 CIFAR-style, 3 ImageNet-style)");
DEFINE_int64(classes, 0, "classes (0: 10 CIFAR-style, 1000 ImageNet-style)");
DEFINE_string(executor, "dag", "the nets' type: dag or simple");
DEFINE_string(out_dir, "", "directory for init.pbtxt, train.pbtxt and test.pbtxt (required)");

namespace braid {
namespace {

SyntheticImages ImagesFromFlags() {
  return ResNetImages(FLAGS_model, FLAGS_batch_size,
                      {FLAGS_channels, FLAGS_image_size, FLAGS_classes});
}

void WriteNets(const std::string& model, const SyntheticImages& images, const std::string& dir) {
  TrainingNetsSpec nets_spec = ResNetNetsSpec(model, images);
  nets_spec.train_input = SyntheticImageReader(images, "train_reader");
  nets_spec.test_input = SyntheticImageReader(images, "test_reader");
  nets_spec.optimizer.lr.base_lr = 0.01f;
  TrainingNets nets = BuildTrainingNets(nets_spec);
  nets.train.set_type(FLAGS_executor);
  nets.test.set_type(FLAGS_executor);
  // What a runner reads after a run: braid_run checksums them, the planner never recycles them.
  for (const std::string& out : {nets.loss, nets.accuracy}) nets.train.add_external_output(out);
  for (const std::string& out : {nets.test_loss, nets.test_accuracy}) {
    nets.test.add_external_output(out);
  }
  std::filesystem::create_directories(dir);
  SaveProto(nets.params.init_net, dir + "/init.pbtxt");
  SaveProto(nets.train, dir + "/train.pbtxt");
  SaveProto(nets.test, dir + "/test.pbtxt");
  std::cout << model << " batch " << images.batch << " (" << images.channels << "x"
            << images.image_size << "x" << images.image_size << ", " << images.classes
            << " classes): init " << nets.params.init_net.op_size() << " ops, train "
            << nets.train.op_size() << " ops, test " << nets.test.op_size() << " ops, written to "
            << dir << "/{init,train,test}.pbtxt\n";
}

[[noreturn]] void ExitBadFlags(const std::string& message) {
  std::cerr << "braid_model: " << message << "\n";
  std::exit(kExitBadFlags);
}

void CheckFlags(const std::vector<std::string>& positional) {
  if (!positional.empty()) ExitBadFlags("unexpected argument '" + positional[0] + "'");
  if (FLAGS_out_dir.empty()) ExitBadFlags("--out-dir is required");
  if (FLAGS_batch_size <= 0) ExitBadFlags("--batch-size must be > 0");
  if (FLAGS_image_size < 0 || FLAGS_channels < 0 || FLAGS_classes < 0) {
    ExitBadFlags("--image-size, --channels and --classes must be >= 0");
  }
  if (FLAGS_executor != "dag" && FLAGS_executor != "simple") {
    ExitBadFlags("--executor must be 'dag' or 'simple', got '" + FLAGS_executor + "'");
  }
  const Status model = StatusFromCall([] { ResNetSpecFromName(FLAGS_model, 1, 1); });
  if (!model.ok()) ExitBadFlags("--model: " + model.message());
}

}  // namespace
}  // namespace braid

int main(int argc, char** argv) {
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  const std::vector<std::string> positional = braid::ParseCommandLine(
      argc, argv,
      "braid_model --model resnet20|resnet50|... --batch-size B --out-dir DIR [--image-size S] "
      "[--channels C] [--classes K] [--executor dag|simple]");
  braid::CheckFlags(positional);
  const braid::Status status =
      braid::StatusFromCall([] {
        braid::WriteNets(FLAGS_model, braid::ImagesFromFlags(), FLAGS_out_dir);
      });
  std::cout.flush();
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 1;
  }
  return 0;
}
