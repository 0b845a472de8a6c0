// NetModel: a classifier an application defines as two NetDefs, trained like a model builder's.
//
// The init net fills the parameters; the forward net reads the input images (`input`, float32
// [N, C, H, W]) and the parameters and writes the logits ([N, classes]). NetModelForward turns it
// into the forward function BuildTrainingNets (runtime/models/training_nets.h) takes, so a
// NetModel gets the same loss, gradients, optimizer, data parallelism and checkpoints as AddResNet:
//   parameters  every blob the init net writes, each of which the forward net must read; one the
//               forward net also writes is state (batch-norm running statistics), not trained;
//               the second input (the weights) of Conv, ConvTranspose and FC gets weight decay,
//               the others (biases, batch-norm scale and bias) none.
//   train       the forward ops as they are, the input renamed to the builder's data blob.
//   test        the forward ops with every activation prefixed "test/"; an op whose schema takes
//               is_test gets is_test=1 and keeps only its first output (SpatialBN, Dropout).
// Called a second time with a builder over the same ModelParams (the test net), it reuses the
// parameters registered by the first call.
//
//   NetModel m{init, forward};                         // forward lists "logits" as external_output
//   TrainingNetsSpec spec;
//   spec.name = NetModelName(m);
//   spec.forward = NetModelForward(m);
//
// NetModelForward throws braid::Error (InvalidArgument) naming the net, op and blob when the
// forward net does not read the input, reads a blob that neither the init net nor an earlier op
// writes, or never writes its logits, or when an init blob is unread or of unknown shape.
// Thread safety: pure functions; the returned function holds a copy of the nets.
#ifndef BRAID_RUNTIME_MODELS_NET_MODEL_H_
#define BRAID_RUNTIME_MODELS_NET_MODEL_H_

#include <functional>
#include <string>

#include "proto/braid.pb.h"
#include "runtime/models/model_builder.h"

namespace braid {

struct NetModel {
  NetDef init;
  NetDef forward;
  std::string input = "data";
  std::string logits;  // "": the forward net's one external_output
};

// The forward net's name, or "model" when it has none (checkpoints carry it).
std::string NetModelName(const NetModel& model);

std::function<std::string(ModelBuilder*, const std::string& data)> NetModelForward(
    const NetModel& model);

}  // namespace braid

#endif  // BRAID_RUNTIME_MODELS_NET_MODEL_H_
