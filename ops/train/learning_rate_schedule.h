// LearningRateSchedule: LearningRate's arguments (ops/train/learning_rate_op.h) as plain data, and
// the rate at an iteration as one function compiled for the host and, in .cu files, for CUDA
// devices. The CPU kernel and the CUDA kernel (which reads the iteration counter on the GPU) both
// call LearningRateAt, so their formulas cannot drift apart; both evaluate it in double and round
// once to float (CUDA's pow, cos and log are within 2 ulp of the host's, far below that rounding).
//
//   const LearningRateSchedule s = ParseLearningRateSchedule(ArgumentReader(def.arg()));
//   float lr = LearningRateAt(s, /*iter=*/1200);
//
// The schedule is trivially copyable, so a kernel takes it by value. Pure functions; thread-safe.
#ifndef BRAID_OPS_TRAIN_LEARNING_RATE_SCHEDULE_H_
#define BRAID_OPS_TRAIN_LEARNING_RATE_SCHEDULE_H_

#include <cmath>
#include <cstdint>

#include "runtime/argument.h"

// Compiled for the host and, under nvcc, for CUDA devices too.
#ifndef BRAID_HOST_DEVICE
#ifdef __CUDACC__
#define BRAID_HOST_DEVICE __host__ __device__
#else
#define BRAID_HOST_DEVICE
#endif
#endif

namespace braid {

// std::numbers::pi, spelled out because device code cannot read that variable template.
inline constexpr double kLearningRatePi = 3.141592653589793238462643383279502884;

// Cosine annealing's arguments (policy cosine, or compositeCosine's cosine_* arguments).
struct CosineSchedule {
  double max_lr = 1;
  double min_lr = 0;
  double period = 1;  // max_iter for a single decay
  double t_mult = 1;
  double lr_shrink = 1;
  bool single_decay = false;  // max_iter without period: one decay, then min_lr
};

struct LearningRateSchedule {
  enum class Policy : int32_t {
    kFixed,
    kStep,
    kLinearWarmup,
    kConstantWarmup,
    kCosine,
    kCompositeCosine
  };
  Policy policy = Policy::kFixed;
  float base_lr = 0;  // base_lr * lr_scale, rounded to float as the CPU op always did
  int64_t stepsize = 1;
  double gamma = 1;
  // linearWarmup: start_multiplier; constantWarmup: multiplier; compositeCosine:
  // start_warmup_multiplier.
  double start = 0;
  // linearWarmup, constantWarmup: num_iter; compositeCosine: linear_warmup_num_iter.
  int64_t num_iter = 0;
  int64_t constant_iters = 0;  // compositeCosine: constant_warmup_num_iter
  CosineSchedule cosine;
};

// The schedule of a LearningRate op's arguments; throws braid::Error (InvalidArgument) for an
// unknown policy, a policy's bad arguments, or a missing base_lr.
LearningRateSchedule ParseLearningRateSchedule(const ArgumentReader& args);

BRAID_HOST_DEVICE inline double LinearWarmupMultiplier(double start, int64_t num_iter,
                                                       int64_t iter) {
  if (iter >= num_iter) return 1.0;
  return start + (1 - start) * static_cast<double>(iter) / static_cast<double>(num_iter);
}

// Where iteration t falls in SGDR's cycles (lengths period, period * t_mult, ...): the cycle's
// index, its length and t's offset into it.
struct CosineCycle {
  double index = 0, length = 1, offset = 0;
};

BRAID_HOST_DEVICE inline CosineCycle FindCosineCycle(double t, double period, double t_mult) {
  if (t_mult == 1.0) {
    const double index = floor(t / period);
    return {index, period, t - index * period};
  }
  const double index = floor(log(1 - t / period * (1 - t_mult)) / log(t_mult));
  return {index, pow(t_mult, index) * period, t - (1 - pow(t_mult, index)) / (1 - t_mult) * period};
}

BRAID_HOST_DEVICE inline double CosineMultiplier(const CosineSchedule& c, int64_t iter) {
  const double t = static_cast<double>(iter);
  const CosineCycle cycle = c.single_decay ? CosineCycle{0, c.period, c.period < t ? c.period : t}
                                           : FindCosineCycle(t, c.period, c.t_mult);
  const double cosine = 0.5 * (1 + cos(kLearningRatePi * cycle.offset / cycle.length));
  return pow(c.lr_shrink, cycle.index) * (c.min_lr + (c.max_lr - c.min_lr) * cosine);
}

BRAID_HOST_DEVICE inline double LearningRateMultiplier(const LearningRateSchedule& s,
                                                       int64_t iter) {
  using Policy = LearningRateSchedule::Policy;
  switch (s.policy) {
    case Policy::kFixed:
      return 1.0;
    case Policy::kStep:
      return pow(s.gamma, static_cast<double>(iter / s.stepsize));
    case Policy::kLinearWarmup:
      return LinearWarmupMultiplier(s.start, s.num_iter, iter);
    case Policy::kConstantWarmup:
      return iter < s.num_iter ? s.start : 1.0;
    case Policy::kCosine:
      return CosineMultiplier(s.cosine, iter);
    case Policy::kCompositeCosine:
      if (iter < s.constant_iters) return s.start;
      if (iter < s.constant_iters + s.num_iter) {
        return LinearWarmupMultiplier(s.start, s.num_iter, iter - s.constant_iters);
      }
      return CosineMultiplier(s.cosine, iter - s.constant_iters - s.num_iter);
  }
  return 1.0;
}

// lr = base_lr * lr_scale * multiplier(iter), rounded once to float.
BRAID_HOST_DEVICE inline float LearningRateAt(const LearningRateSchedule& s, int64_t iter) {
  return static_cast<float>(s.base_lr * LearningRateMultiplier(s, iter));
}

}  // namespace braid

#endif  // BRAID_OPS_TRAIN_LEARNING_RATE_SCHEDULE_H_
