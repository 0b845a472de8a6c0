// MomentumSGDUpdate: a momentum SGD step on one parameter, float32 (Caffe2's MomentumSGDUpdate).
//
// Inputs (grad, moment, lr, param), outputs (grad, moment, param), normally in place: grad -> grad,
// moment -> moment, param -> param (pairs {0,0}, {1,1}, {3,2}). lr is a one-element float32. Per
// element, with g = grad + weight_decay * param:
//   nesterov = 0 (default):  m' = lr * g + momentum * m;   param -= m';   grad <- m'
//   nesterov = 1:            m' = momentum * m + lr * g;
//                            step = (1 + momentum) * m' - momentum * m;   param -= step; grad <-
//                            step
// and moment <- m'. `momentum` defaults to 0; `weight_decay` (default 0) is braid's addition: L2
// decay folded into the gradient before the update.
//
// Sign convention (Caffe2's): this op subtracts, so lr must be POSITIVE for descent. Caffe2's
// Python optimizer builds it as LearningRate(base_lr = -(-lr)) = +lr for momentum SGD, and a
// negative rate (base_lr = -lr) for plain SGD via WeightedSum(param, ONE, grad, lr), which adds.
//
//   op { type: "MomentumSGDUpdate" input: "w_grad" input: "w_momentum" input: "lr" input: "w"
//        output: "w_grad" output: "w_momentum" output: "w"
//        arg { name: "momentum" f: 0.9 } arg { name: "weight_decay" f: 1e-4 } }
//
// No gradient.
#ifndef BRAID_OPS_TRAIN_MOMENTUM_SGD_UPDATE_OP_H_
#define BRAID_OPS_TRAIN_MOMENTUM_SGD_UPDATE_OP_H_

#include <vector>

#include "runtime/core/operator.h"

namespace braid {

// Shape inference and the input checks, shared with the CUDA kernel.
std::vector<ShapeInfo> InferMomentumSGDUpdateShape(const OperatorDef& def,
                                                   const std::vector<ShapeInfo>& in);

// Not final: the CUDA kernel (momentum_sgd_update_op.cu) derives from it to share the arguments.
class MomentumSGDUpdateOp : public OperatorBase {
 public:
  MomentumSGDUpdateOp(const OperatorDef& def, Workspace* ws);
  void Run() override;

 protected:
  float momentum_;
  bool nesterov_;
  float weight_decay_;
};

}  // namespace braid

#endif  // BRAID_OPS_TRAIN_MOMENTUM_SGD_UPDATE_OP_H_
