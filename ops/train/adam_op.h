// Adam: an Adam step on one parameter, float32 (Caffe2's Adam; arXiv:1412.6980).
//
// Inputs (param, moment_1, moment_2, grad, lr, iter); outputs (param, moment_1, moment_2) and an
// optional fourth, Caffe2's output_grad: the direction below, which the update scales by lr;
// normally in place (pairs {0,0}, {1,1}, {2,2}, and grad with the fourth). lr is a
// one-element float32, iter Iter's one-element int64 counter. Per element (ops/train/
// adaptive_update.h), with t = iter + 1 and g = grad (+ weight_decay * param unless decoupled):
//   m1' = beta1 m1 + (1 - beta1) g;   m2' = beta2 m2 + (1 - beta2) g^2
//   direction = sqrt(1 - beta2^t) / (1 - beta1^t) * m1' / (sqrt(m2') + epsilon)
//   param' = param + lr * direction
// Arguments: beta1 (0.9), beta2 (0.999), epsilon (1e-5), as in Caffe2; braid adds weight_decay (0)
// and decoupled (0): 1 decays the parameter itself, param' += lr * weight_decay * param (AdamW,
// arXiv:1711.05101), instead of adding weight_decay * param to the gradient.
//
// As in Caffe2: the op adds, so lr must be NEGATIVE for descent (Caffe2's Python optimizer builds
// LearningRate with base_lr = -lr); t counts from iter + 1, so in a net that runs Iter before the
// update (as Caffe2's and braid's trainers do) the first step has t = 2; and epsilon is added to
// sqrt(m2') before the correction scales the step (PyTorch adds it after: its epsilon is this
// one divided by sqrt(1 - beta2^t)).
//
//   op { type: "Adam" input: "w" input: "w_moment1" input: "w_moment2" input: "w_grad"
//        input: "lr" input: "iter" output: "w" output: "w_moment1" output: "w_moment2"
//        arg { name: "beta1" f: 0.9 } arg { name: "epsilon" f: 1e-8 } }
//
// No gradient.
#ifndef BRAID_OPS_TRAIN_ADAM_OP_H_
#define BRAID_OPS_TRAIN_ADAM_OP_H_

#include <vector>

#include "ops/train/adaptive_update.h"
#include "runtime/core/operator.h"

namespace braid {

// Shape inference and the input checks, shared with the CUDA kernel.
std::vector<ShapeInfo> InferAdamShape(const OperatorDef& def, const std::vector<ShapeInfo>& in);

// Not final: the CUDA kernel (adam_op.cu) derives from it to share the arguments.
class AdamOp : public OperatorBase {
 public:
  AdamOp(const OperatorDef& def, Workspace* ws);
  void Run() override;

 protected:
  // Checks the inputs and returns the elements' shape.
  const std::vector<int64_t>& CheckInputs();
  // The outputs as `shape`; the optional step null where the op lacks it. Take them before
  // reading the inputs: they are normally the same blobs.
  struct Outputs {
    float* param;
    float* m1;
    float* m2;
    float* step;
  };
  Outputs ShapedOutputs(const std::vector<int64_t>& shape);
  const AdamArgs args_;
};

}  // namespace braid

#endif  // BRAID_OPS_TRAIN_ADAM_OP_H_
