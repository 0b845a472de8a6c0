// The per-element arithmetic of Adam and Adagrad (ops/train/adam_op.h, ops/train/adagrad_op.h),
// compiled for the host and, in .cu files, for CUDA devices (ops/common/host_device.h): the CPU
// kernels and the CUDA kernels call the same functions, so their formulas cannot drift apart.
//
//   const AdamArgs a{.beta1 = 0.9f, .beta2 = 0.999f, .epsilon = 1e-8f};
//   const float correction = AdamCorrection(a, /*iter=*/41);
//   const AdamElement e = AdamUpdate(a, lr, correction, w[i], g[i], m1[i], m2[i]);
//
// Sign convention (Caffe2's): both ops ADD lr times their step, so lr must be negative for descent
// (Caffe2's Python optimizers build LearningRate with base_lr = -lr for Adam and Adagrad).
// Pure functions; thread-safe.
#ifndef BRAID_OPS_TRAIN_ADAPTIVE_UPDATE_H_
#define BRAID_OPS_TRAIN_ADAPTIVE_UPDATE_H_

#include <cmath>
#include <cstdint>

#include "ops/common/host_device.h"

namespace braid {

struct AdamArgs {
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-5f;  // Caffe2's default
  float weight_decay = 0;
  bool decoupled = false;  // weight decay applied to the parameter (AdamW), not the gradient
};

// Caffe2's bias correction at iteration `iter` (t = iter + 1):
// sqrt(1 - beta2^t) / (1 - beta1^t), evaluated in double and rounded once to float.
BRAID_HOST_DEVICE inline float AdamCorrection(const AdamArgs& a, int64_t iter) {
  const double t = static_cast<double>(iter) + 1;
  return static_cast<float>(sqrt(1 - pow(static_cast<double>(a.beta2), t)) /
                            (1 - pow(static_cast<double>(a.beta1), t)));
}

struct AdamElement {
  float param, moment1, moment2;
  float direction;  // correction * m1' / (sqrt(m2') + epsilon): Adam's optional fourth output
};

// With g = grad (+ weight_decay * param unless decoupled):
//   m1' = beta1 m1 + (1 - beta1) g;   m2' = beta2 m2 + (1 - beta2) g^2
//   direction = correction * m1' / (sqrt(m2') + epsilon)   (Caffe2's output_grad: no lr)
//   param' = param + lr * direction  (decoupled: + lr * weight_decay * param as well)
BRAID_HOST_DEVICE inline AdamElement AdamUpdate(const AdamArgs& a, float lr, float correction,
                                                float param, float grad, float m1, float m2) {
  const float g = a.decoupled ? grad : grad + a.weight_decay * param;
  const float m1_new = m1 * a.beta1 + g * (1 - a.beta1);
  const float m2_new = m2 * a.beta2 + g * g * (1 - a.beta2);
  const float direction = correction * m1_new / (sqrtf(m2_new) + a.epsilon);
  const float decay = a.decoupled ? lr * a.weight_decay * param : 0.f;
  return {param + lr * direction + decay, m1_new, m2_new, direction};
}

struct AdagradArgs {
  float epsilon = 1e-5f;  // Caffe2's default
  float decay = 1;        // the moment's decay
  float weight_decay = 0;
};

struct AdagradElement {
  float param, moment;
  float effective_lr;  // lr / (sqrt(moment') + epsilon): the optional third output
  float step;          // param' - param: the optional fourth output
};

// g = grad + weight_decay * param;  h' = decay * h + g^2;
// param' = param + lr * g / (sqrt(h') + epsilon).
BRAID_HOST_DEVICE inline AdagradElement AdagradUpdate(const AdagradArgs& a, float lr, float param,
                                                      float grad, float moment) {
  const float g = grad + a.weight_decay * param;
  const float h = a.decay * moment + g * g;
  const float denominator = sqrtf(h) + a.epsilon;
  const float step = lr * g / denominator;
  return {param + step, h, lr / denominator, step};
}

}  // namespace braid

#endif  // BRAID_OPS_TRAIN_ADAPTIVE_UPDATE_H_
