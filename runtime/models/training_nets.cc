#include "runtime/models/training_nets.h"

#include <map>
#include <set>
#include <string>

#include "braid/status.h"
#include "runtime/core/autodiff.h"
#include "runtime/core/device.h"
#include "runtime/core/shape_inference.h"
#include "runtime/models/blocked_layouts.h"
#include "runtime/models/recompute.h"

namespace braid {
namespace {

[[noreturn]] void ThrowInvalid(const std::string& message) {
  throw Error(Status::InvalidArgument(message));
}

void CheckSchedule(const LearningRateSchedule& lr) {
  static const std::set<std::string> kPolicies = {"fixed", "step", "multistep", "exp",
                                                  "inv",   "poly", "cosine"};
  if (kPolicies.count(lr.policy) == 0) {
    ThrowInvalid("unknown learning-rate policy '" + lr.policy +
                 "' (fixed, step, multistep, exp, inv, poly or cosine)");
  }
  if (lr.policy == "step" && lr.stepsize <= 0) ThrowInvalid("policy 'step' needs stepsize > 0");
  if (lr.policy == "multistep" && lr.stepsizes.empty()) {
    ThrowInvalid("policy 'multistep' needs stepsizes");
  }
  if ((lr.policy == "cosine" || lr.policy == "poly") && lr.max_iter <= 0) {
    ThrowInvalid("policy '" + lr.policy + "' needs max_iter > 0");
  }
  if (!(lr.base_lr > 0))
    ThrowInvalid("base_lr must be positive, got " + std::to_string(lr.base_lr));
}

void CheckOptimizer(const OptimizerSpec& o) {
  CheckSchedule(o.lr);
  if (o.type != "momentum" && o.type != "adam" && o.type != "adamw" && o.type != "adagrad") {
    ThrowInvalid("unknown optimizer '" + o.type + "' (momentum, adam, adamw or adagrad)");
  }
  if (o.momentum < 0 || o.momentum >= 1) {
    ThrowInvalid("momentum must be in [0, 1), got " + std::to_string(o.momentum));
  }
  if (!(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1)) {
    ThrowInvalid("beta1 and beta2 must be in [0, 1), got " + std::to_string(o.beta1) + " and " +
                 std::to_string(o.beta2));
  }
  if (!(o.epsilon > 0)) ThrowInvalid("epsilon must be > 0");
  if (o.weight_decay < 0) ThrowInvalid("weight decay must be >= 0");
}

// The reader op writing `data` and `label` where the net's ops run: on a host device the reader
// writes them itself; for another device it reads into host blobs (`data`_host, `label`_host) on
// the host and a CopyCPUToGPU per blob brings them to the device.
void AddReader(const OperatorDef& reader, const std::string& data, const std::string& label,
               const DeviceOption& device, NetDef* net) {
  OperatorDef* op = net->add_op();
  *op = reader;
  op->clear_output();
  const bool on_host = DeviceFromProto(device).is_host();
  for (const std::string& blob : {data, label}) op->add_output(on_host ? blob : blob + "_host");
  if (on_host) {
    if (!op->has_device_option() && device.ByteSizeLong() > 0) *op->mutable_device_option() = device;
    return;
  }
  op->clear_device_option();
  for (const std::string& blob : {data, label}) {
    OperatorDef* copy = net->add_op();
    copy->set_type("CopyCPUToGPU");
    copy->add_input(blob + "_host");
    copy->add_output(blob);
    *copy->mutable_device_option() = device;
  }
}

// SoftmaxWithLoss and Accuracy after the logits; blobs are named through the builder's prefix.
void AddLossAndAccuracy(ModelBuilder* b, const std::string& logits, const std::string& label) {
  b->AddOp("SoftmaxWithLoss", {logits, label}, {b->Blob("softmax"), b->Blob("loss")});
  b->AddOp("Accuracy", {b->Blob("softmax"), label}, {b->Blob("accuracy")});
}

// The autodiff differentiates every input, the images too. Nothing reads their gradient, so where
// a ConvGradient writes it as its optional last output (dX) that output is dropped, which spares
// the first layer's backward-data convolution (for ResNet-50 at 224x224, a 7x7 convolution with
// 64 filters: ~1 GFLOP per image).
void DropImageGradient(const GradientMap& grads, const std::string& data, NetDef* net) {
  const auto grad = grads.find(data);
  if (grad == grads.end()) return;
  for (const OperatorDef& op : net->op()) {
    for (const std::string& in : op.input()) {
      if (in == grad->second) return;
    }
  }
  for (OperatorDef& op : *net->mutable_op()) {
    const int last = op.output_size() - 1;
    if (op.type() == "ConvGradient" && last > 0 && op.output(last) == grad->second) {
      op.mutable_output()->RemoveLast();
    }
  }
}

// A zero-filled blob of `shape` in the init net: optimizer state.
void AddZeroState(const std::string& blob, const std::vector<int64_t>& shape,
                  const DeviceOption& device, TrainingNets* nets) {
  OperatorDef* fill = nets->params.init_net.add_op();
  fill->set_type("ConstantFill");
  fill->add_output(blob);
  if (device.ByteSizeLong() > 0) *fill->mutable_device_option() = device;
  AddIntsArg(fill, "shape", shape);
  AddFloatArg(fill, "value", 0.f);
  nets->optimizer_blobs.push_back(blob);
}

// The update op of parameter p, its state zero-filled in the init net.
void AddUpdate(const TrainingNetsSpec& spec, const ParamInfo& p, const std::string& grad,
               ModelBuilder* b, TrainingNets* nets) {
  const OptimizerSpec& o = spec.optimizer;
  const float weight_decay = p.weight_decay() ? o.weight_decay : 0.f;
  if (o.type == "momentum") {
    const std::string momentum = p.name + "_momentum";
    AddZeroState(momentum, p.shape, spec.device, nets);
    OperatorDef* update =
        b->AddOp("MomentumSGDUpdate", {grad, momentum, nets->lr, p.name}, {grad, momentum, p.name});
    AddFloatArg(update, "momentum", o.momentum);
    AddIntArg(update, "nesterov", o.nesterov ? 1 : 0);
    AddFloatArg(update, "weight_decay", weight_decay);
  } else if (o.type == "adagrad") {
    const std::string moment = p.name + "_squared_sum";  // Caffe2's optimizer's names
    AddZeroState(moment, p.shape, spec.device, nets);
    OperatorDef* update = b->AddOp("Adagrad", {p.name, moment, grad, nets->lr}, {p.name, moment});
    AddFloatArg(update, "epsilon", o.epsilon);
    AddFloatArg(update, "weight_decay", weight_decay);
  } else {
    const std::string moment1 = p.name + "_first_moment", moment2 = p.name + "_second_moment";
    AddZeroState(moment1, p.shape, spec.device, nets);
    AddZeroState(moment2, p.shape, spec.device, nets);
    OperatorDef* update = b->AddOp("Adam", {p.name, moment1, moment2, grad, nets->lr, nets->iter},
                                   {p.name, moment1, moment2});
    AddFloatArg(update, "beta1", o.beta1);
    AddFloatArg(update, "beta2", o.beta2);
    AddFloatArg(update, "epsilon", o.epsilon);
    AddFloatArg(update, "weight_decay", weight_decay);
    AddIntArg(update, "decoupled", o.type == "adamw" ? 1 : 0);
  }
}

void AddOptimizer(const TrainingNetsSpec& spec, const GradientMap& grads, ModelBuilder* b,
                  TrainingNets* nets) {
  ModelParams& params = nets->params;
  OperatorDef* iter_fill = params.init_net.add_op();
  iter_fill->set_type("ConstantFill");
  iter_fill->add_output(nets->iter);
  if (spec.device.ByteSizeLong() > 0) *iter_fill->mutable_device_option() = spec.device;
  AddIntsArg(iter_fill, "shape", {1});
  AddIntArg(iter_fill, "value", 0);
  AddIntArg(iter_fill, "dtype", TensorProto::INT64);

  b->AddOp("Iter", {nets->iter}, {nets->iter});
  OperatorDef* lr = b->net()->add_op();
  *lr = LearningRateOp(spec.optimizer.lr, nets->iter, nets->lr,
                       spec.optimizer.type == "momentum" ? 1 : -1);
  if (spec.device.ByteSizeLong() > 0) *lr->mutable_device_option() = spec.device;
  for (const ParamInfo& p : params.params) {
    if (!p.trainable()) continue;
    auto grad = grads.find(p.name);
    if (grad == grads.end()) {
      ThrowInvalid("model '" + spec.name + "': parameter '" + p.name + "' gets no gradient from " +
                   "the loss");
    }
    AddUpdate(spec, p, grad->second, b, nets);
  }
}

}  // namespace

const UpdateInputs* UpdateInputsOf(const OperatorDef& op) {
  static const UpdateInputs kMomentum{0, 3}, kAdam{3, 0}, kAdagrad{2, 0};
  if (op.type() == "MomentumSGDUpdate") return &kMomentum;  // (grad, momentum, lr, param)
  if (op.type() == "Adam") return &kAdam;        // (param, moment1, moment2, grad, lr, iter)
  if (op.type() == "Adagrad") return &kAdagrad;  // (param, squared_sum, grad, lr)
  return nullptr;
}

std::vector<std::string> TrainingNets::CheckpointBlobs() const {
  std::vector<std::string> blobs;
  for (int d = 0; d < num_devices(); ++d) {
    for (const ParamInfo& p : params.params) blobs.push_back(OnDevice(d, p.name));
    for (const std::string& m : optimizer_blobs) blobs.push_back(OnDevice(d, m));
    blobs.push_back(OnDevice(d, iter));
  }
  return blobs;
}

OperatorDef SyntheticImageReader(const SyntheticImages& images, const std::string& name) {
  OperatorDef op;
  op.set_type("IdxImageInput");
  op.set_name(name);
  AddIntArg(&op, "batch_size", images.batch);
  AddIntArg(&op, "channels", images.channels);
  AddIntArg(&op, "height", images.image_size);
  AddIntArg(&op, "width", images.image_size);
  AddIntArg(&op, "num_classes", images.classes);
  AddIntArg(&op, "synthetic", 1);
  AddIntArg(&op, "synthetic_examples", images.examples > 0 ? images.examples : images.batch);
  AddIntArg(&op, "seed", 1);
  return op;
}

OperatorDef LearningRateOp(const LearningRateSchedule& schedule, const std::string& iter,
                           const std::string& lr, int sign) {
  OperatorDef op;
  op.set_type("LearningRate");
  op.add_input(iter);
  op.add_output(lr);
  AddFloatArg(&op, "base_lr", sign < 0 ? -schedule.base_lr : schedule.base_lr);
  AddStringArg(&op, "policy", schedule.policy);
  const std::string& policy = schedule.policy;
  if (policy == "step") AddIntArg(&op, "stepsize", schedule.stepsize);
  if (policy == "multistep") AddIntsArg(&op, "stepsizes", schedule.stepsizes);
  if (policy == "step" || policy == "multistep" || policy == "exp" || policy == "inv") {
    AddFloatArg(&op, "gamma", schedule.gamma);
  }
  if (policy == "inv" || policy == "poly") AddFloatArg(&op, "power", schedule.power);
  if (policy == "cosine" || policy == "poly") AddIntArg(&op, "max_iter", schedule.max_iter);
  if (policy == "cosine") AddFloatArg(&op, "min_lr", schedule.min_lr);
  return op;
}

TrainingNets BuildTrainingNets(const TrainingNetsSpec& spec) {
  CheckOptimizer(spec.optimizer);
  TrainingNets nets;
  nets.params.init_net.set_name(spec.name + "_init");
  nets.train.set_name(spec.name + "_train");
  nets.test.set_name(spec.name + "_test");

  ModelBuilder train(&nets.params, &nets.train, {.device = spec.device});
  AddReader(spec.train_input, "data", "label", spec.device, &nets.train);
  AddLossAndAccuracy(&train, spec.forward(&train, "data"), "label");
  const int first_backward_op = nets.train.op_size();
  const GradientMap grads = AddGradientOperators(&nets.train, {nets.loss});
  nets.recomputable_convs = RecomputableConvs(nets.train, first_backward_op,
                                              InferBlobShapes(nets.params.init_net, {}));
  nets.recomputed = RecomputeInBackward(
      &nets.train, first_backward_op,
      {.bn_relu = spec.recompute_bn_relu, .conv_outputs = spec.recompute_convs});
  DropImageGradient(grads, "data", &nets.train);
  AddOptimizer(spec, grads, &train, &nets);

  ModelBuilder test(&nets.params, &nets.test,
                    {.is_test = true, .blob_prefix = "test/", .device = spec.device});
  AddReader(spec.test_input, "test/data", "test/label", spec.device, &nets.test);
  const size_t params_before = nets.params.params.size();
  AddLossAndAccuracy(&test, spec.forward(&test, "test/data"), "test/label");
  if (nets.params.params.size() != params_before) {
    ThrowInvalid("model '" + spec.name + "': the test forward pass creates parameters the train " +
                 "pass does not (e.g. '" + nets.params.params[params_before].name + "')");
  }
  // Blocked layouts are the oneDNN kernels' (cpu, and sim, which runs them); CUDA's are plain.
  if (spec.blocked_layouts && DeviceFromProto(spec.device).type != DeviceType::kCuda) {
    const std::map<std::string, ShapeInfo> params = InferBlobShapes(nets.params.init_net, {});
    UseBlockedLayouts(&nets.train, params);
    UseBlockedLayouts(&nets.test, params);
  }
  return nets;
}

}  // namespace braid
