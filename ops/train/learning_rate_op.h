// LearningRate: the learning rate at an iteration (Caffe2's LearningRate).
//
// Input: an int64 counter with one element (Iter's). Output: a float32 scalar (shape [])
//   lr = base_lr * lr_scale * multiplier(iter)
// `base_lr` and `policy` are required, `lr_scale` defaults to 1. Policies, their arguments (and
// defaults):
//   fixed            1
//   step             gamma ^ floor(iter / stepsize)              stepsize > 0, gamma > 0
//   multistep        gamma ^ (the stepsizes <= iter)             stepsizes (ascending, at most 32),
//                                                                gamma > 0
//   exp              gamma ^ iter                                gamma > 0
//   inv              (1 + gamma * iter) ^ -power                 gamma > 0, power > 0
//   poly             (1 - iter / max_iter) ^ power, then 0       max_iter > 0, power >= 0 (Caffe2's
//                                                                rate past max_iter is undefined)
//   linearWarmup     start_multiplier + (1 - start_multiplier) * iter / num_iter while
//                    iter < num_iter, then 1                     start_multiplier (0), num_iter (0)
//   constantWarmup   multiplier while iter < num_iter, then 1    multiplier (0.5), num_iter (0)
//   cosine           min_lr + (max_lr - min_lr) (1 + cos(pi t / T)) / 2      max_lr (1), min_lr (0)
//                    - with `max_iter` (braid): one decay, T = max_iter, t = min(iter, max_iter):
//                      from max_lr at 0 to min_lr at max_iter, then min_lr;
//                    - with `period` (Caffe2, SGDR arXiv:1608.03983): restarts; cycle k lasts
//                      T = period * t_mult^k (t_mult 1; at least 1), t counts from its start, and
//                      the rate is scaled by lr_shrink^k (lr_shrink 1); with period 100 and
//                      t_mult 2 the restarts are at 100, 300, 700, 1500, ..., exactly; a t_mult
//                      below 1 shrinks the cycles, which end at period / (1 - t_mult): an
//                      iteration there or later is an error on the CPU and NaN on a GPU (NaN in
//                      Caffe2)
//   compositeCosine  warmup, then cosine (Caffe2): start_warmup_multiplier (0.1) for
//                    constant_warmup_num_iter iterations (0), a linear ramp from it to 1 over
//                    linear_warmup_num_iter more (0), then the SGDR cosine above with arguments
//                    cosine_max_lr, cosine_min_lr, cosine_period (required), cosine_t_mult and
//                    cosine_lr_shrink, counted from the end of the warmup
// max_lr and min_lr multiply base_lr, as in Caffe2. The defaults of cosine and compositeCosine are
// braid's (a plain decay to 0, no warmup); Caffe2's were max_lr 0.5, min_lr 0.1, period 50,
// lr_shrink 0.99 and 10^7 warmup iterations, so give those arguments explicitly to match a Caffe2
// net that relied on them.
//
// Sign convention (Caffe2's): the output is used as is. MomentumSGDUpdate subtracts lr * grad, so
// give it a positive base_lr; WeightedSum(param, ONE, grad, lr), Adam and Adagrad add, so give
// them a negative one (Caffe2's Python optimizer passes base_lr = -lr for plain SGD, Adam and
// Adagrad, and +lr for momentum SGD).
//
//   op { type: "LearningRate" input: "iter" output: "lr" arg { name: "base_lr" f: 0.1 }
//        arg { name: "policy" s: "step" } arg { name: "stepsize" i: 1000 }
//        arg { name: "gamma" f: 0.5 } }
//
// No gradient. Errors in the arguments are reported when the op is created.
#ifndef BRAID_OPS_TRAIN_LEARNING_RATE_OP_H_
#define BRAID_OPS_TRAIN_LEARNING_RATE_OP_H_

#include <vector>

#include "ops/train/learning_rate_schedule.h"
#include "runtime/core/operator.h"

namespace braid {

// Shape inference and the input check (one int64), shared with the CUDA kernel.
std::vector<ShapeInfo> InferLearningRateShape(const OperatorDef& def,
                                              const std::vector<ShapeInfo>& in);

// Not final: the CUDA kernel (learning_rate_op.cu) derives from it to share the parsed schedule.
class LearningRateOp : public OperatorBase {
 public:
  LearningRateOp(const OperatorDef& def, Workspace* ws);
  void Run() override;

 protected:
  const LearningRateSchedule schedule_;
};

}  // namespace braid

#endif  // BRAID_OPS_TRAIN_LEARNING_RATE_OP_H_
