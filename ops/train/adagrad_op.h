// Adagrad: an Adagrad step on one parameter, float32 (Caffe2's Adagrad; Duchi et al., JMLR 2011).
//
// Inputs (param, moment, grad, lr); outputs (param, moment) and, optionally, effective_lr and
// update; normally in place (pairs {0,0}, {1,1}). lr is a one-element float32. Per element
// (ops/train/adaptive_update.h), with g = grad + weight_decay * param:
//   h' = decay * h + g^2;   param' = param + lr * g / (sqrt(h') + epsilon)
//   effective_lr = lr / (sqrt(h') + epsilon);   update = param' - param
// Arguments, as in Caffe2: epsilon (1e-5), decay (1), weight_decay (0).
//
// As in Caffe2 the op adds: lr must be NEGATIVE for descent (Caffe2's Python optimizer builds
// LearningRate with base_lr = -lr).
//
//   op { type: "Adagrad" input: "w" input: "w_moment" input: "w_grad" input: "lr"
//        output: "w" output: "w_moment" arg { name: "epsilon" f: 1e-10 } }
//
// No gradient.
#ifndef BRAID_OPS_TRAIN_ADAGRAD_OP_H_
#define BRAID_OPS_TRAIN_ADAGRAD_OP_H_

#include <vector>

#include "ops/train/adaptive_update.h"
#include "runtime/core/operator.h"

namespace braid {

// Shape inference and the input checks, shared with the CUDA kernel.
std::vector<ShapeInfo> InferAdagradShape(const OperatorDef& def, const std::vector<ShapeInfo>& in);

// Not final: the CUDA kernel (adagrad_op.cu) derives from it to share the arguments.
class AdagradOp : public OperatorBase {
 public:
  AdagradOp(const OperatorDef& def, Workspace* ws);
  void Run() override;

 protected:
  // Checks the inputs and returns the elements' shape.
  const std::vector<int64_t>& CheckInputs();
  // The outputs as `shape`; the optional ones null where the op lacks them. Take them before
  // reading the inputs: they are normally the same blobs.
  struct Outputs {
    float* param;
    float* moment;
    float* effective_lr;
    float* update;
  };
  Outputs ShapedOutputs(const std::vector<int64_t>& shape);
  const AdagradArgs args_;
};

}  // namespace braid

#endif  // BRAID_OPS_TRAIN_ADAGRAD_OP_H_
