// BuildTrainingNets: the init, train and test nets of a classifier trained with momentum SGD,
// Adam, AdamW or Adagrad.
//
// From a forward pass (a function appending layers to a ModelBuilder, e.g. AddResNet) and the two
// data-reader ops, it emits:
//   init   fills every parameter (ModelBuilder's fills), the optimizer's zero state per trained
//          parameter (Caffe2's optimizers' names: `param`_momentum for momentum SGD,
//          `param`_squared_sum for Adagrad, `param`_first_moment and `param`_second_moment for
//          Adam) and the iteration counter `iter` (int64 [1], 0).
//   train  reader -> data, label (on a device other than the host: the reader, a host op, writes
//          data_host and label_host, and a CopyCPUToGPU each brings them to the device);
//          forward -> logits; SoftmaxWithLoss -> softmax, loss;
//          Accuracy -> accuracy; the gradient ops (AddGradientOperators, runtime/core/autodiff.h);
//          Iter (iter += 1); LearningRate (iter -> lr); one MomentumSGDUpdate, Adam or Adagrad
//          per trained parameter (weight decay for weights only). lr is the rate the update op
//          takes: positive for MomentumSGDUpdate, negative for Adam and Adagrad (Caffe2's signs).
//   test   reader -> test/data, test/label; the same forward with is_test=1, reading the same
//          parameter blobs, every activation prefixed "test/"; SoftmaxWithLoss -> test/loss;
//          Accuracy -> test/accuracy. Run it in a child workspace of the train net's.
//
//   TrainingNetsSpec spec;
//   spec.forward = [](ModelBuilder* b, const std::string& data) {
//     return AddResNet(b, ResNetSpecFromName("resnet20", 1, 10), data);
//   };
//   spec.train_input = reader;   // outputs are set here: "data", "label"
//   spec.test_input = test_reader;
//   TrainingNets nets = BuildTrainingNets(spec);
//   std::cout << NetToText(nets.train);
//
// Throws braid::Error for an unknown learning-rate policy or invalid optimizer settings.
// Thread safety: a pure function.
#ifndef BRAID_RUNTIME_MODELS_TRAINING_NETS_H_
#define BRAID_RUNTIME_MODELS_TRAINING_NETS_H_

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "proto/braid.pb.h"
#include "runtime/models/model_builder.h"
#include "runtime/models/recompute.h"

namespace braid {

// Caffe2's LearningRate policies (ops/train/learning_rate_op.h), evaluated at iter = 1, 2, ...
// (Iter runs before LearningRate, so the first iteration uses lr(1)).
struct LearningRateSchedule {
  // fixed | step | multistep | exp | inv | poly | cosine
  std::string policy = "cosine";
  float base_lr = 0.1f;  // > 0: the descent's rate, whatever the update op's sign
  int64_t stepsize = 0;  // step: multiply by gamma every stepsize iterations
  std::vector<int64_t> stepsizes;  // multistep: multiply by gamma at each of these iterations
  float gamma = 0.1f;              // step, multistep, exp, inv
  float power = 1.f;               // inv, poly
  int64_t max_iter = 0;  // cosine: one decay from base_lr to min_lr * base_lr at max_iter; poly
  float min_lr = 0.f;    // cosine: a multiple of base_lr, as in Caffe2
};

struct OptimizerSpec {
  // momentum (MomentumSGDUpdate), adam, adamw (Adam with decoupled weight decay) or adagrad.
  std::string type = "momentum";
  LearningRateSchedule lr;
  float momentum = 0.9f;               // momentum
  bool nesterov = false;               // momentum
  float beta1 = 0.9f, beta2 = 0.999f;  // adam, adamw
  float epsilon = 1e-8f;               // adam, adamw, adagrad
  float weight_decay = 1e-4f;  // applied to ParamKind::kWeight parameters only
};

struct TrainingNetsSpec {
  std::string name = "model";
  // Appends the forward pass from `data` and returns the logits blob ([N, classes]).
  std::function<std::string(ModelBuilder*, const std::string& data)> forward;
  OperatorDef train_input;  // a reader op; its outputs are replaced by data and label
  OperatorDef test_input;
  OptimizerSpec optimizer;
  DeviceOption device;  // every op of every net runs here, but the readers (on the host)
  // Recompute each SpatialBN + Relu output in the backward pass instead of keeping it from the
  // forward pass (runtime/models/recompute.h): less memory for a little more arithmetic, when the
  // train net's memory is planned with shared activations (else it only adds blobs).
  bool recompute_bn_relu = true;
  // The forward Convs (by output blob) whose outputs the backward pass recomputes too
  // (runtime/models/recompute.h; TrainingNets::recomputable_convs lists the candidates, and
  // BuildTrainingNetsWithinArena in runtime/models/training_footprint.h picks them for a budget).
  std::set<std::string> recompute_convs;
  // Keep activations between oneDNN ops in the blocked layout (runtime/models/blocked_layouts.h),
  // in the train and test nets: no reorders between consecutive conv, batch-norm and pooling ops.
  bool blocked_layouts = true;
};

struct TrainingNets {
  ModelParams params;  // params.init_net is the init net
  NetDef train;
  NetDef test;
  // Blob names the trainer reads.
  std::string loss = "loss", accuracy = "accuracy", lr = "lr", iter = "iter";
  std::string test_loss = "test/loss", test_accuracy = "test/accuracy";
  // The optimizer's state: one blob per trained parameter (two for Adam), in the init net.
  std::vector<std::string> optimizer_blobs;
  // The train net's recomputation (runtime/models/recompute.h): the Convs it could recompute,
  // cheapest per byte first, and what it did.
  std::vector<std::string> recomputable_convs;
  RecomputeCount recomputed;
  // Data parallel (runtime/models/data_parallel.h): one prefix per device ("cpu_0/", "cpu_1/", ...)
  // in front of every blob name above on that device. Empty for one device without a scope.
  std::vector<std::string> device_prefixes;

  int num_devices() const {
    return device_prefixes.empty() ? 1 : static_cast<int>(device_prefixes.size());
  }
  // `blob` (a name above) as device d holds it.
  std::string OnDevice(int d, const std::string& blob) const {
    return device_prefixes.empty() ? blob : device_prefixes[d] + blob;
  }
  // What a checkpoint must hold to resume: every parameter (trained or state), the optimizer's
  // state and the iteration counter, on every device.
  std::vector<std::string> CheckpointBlobs() const;
};

TrainingNets BuildTrainingNets(const TrainingNetsSpec& spec);

// An optimizer's update op (MomentumSGDUpdate, Adam, Adagrad): where it reads the parameter's
// gradient and the parameter. Null for other ops.
struct UpdateInputs {
  int grad = 0, param = 0;
};
const UpdateInputs* UpdateInputsOf(const OperatorDef& op);

// The shape of a synthetic image set (IdxImageInput synthetic=1: random images and labels from a
// seed, no files): for benchmarks, tools and tests.
struct SyntheticImages {
  int64_t batch = 64, channels = 1, image_size = 28, classes = 10;
  int64_t examples = 0;  // 0: one batch
};
// An IdxImageInput op named `name` serving `images` (seed 1; outputs are set by BuildTrainingNets).
OperatorDef SyntheticImageReader(const SyntheticImages& images, const std::string& name);

// The LearningRate op for `schedule` reading `iter`, writing `lr` (Caffe2's argument names);
// `sign` -1 negates base_lr, for update ops that add lr times their step.
OperatorDef LearningRateOp(const LearningRateSchedule& schedule, const std::string& iter,
                           const std::string& lr, int sign = 1);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_TRAINING_NETS_H_
