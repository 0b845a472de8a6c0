// LearningRateSchedule: LearningRate's arguments (ops/train/learning_rate_op.h) as plain data, and
// the rate at an iteration as one function compiled for the host and, in .cu files, for CUDA
// devices. The CPU kernel and the CUDA kernel (which reads the iteration counter on the GPU) both
// call LearningRateAt, so their formulas cannot drift apart; both evaluate it in double and round
// once to float (CUDA's pow and cos are within 2 ulp of the host's, far below that rounding). Which
// SGDR cycle an iteration is in is decided by exact comparisons (FindCosineCycle), never by a
// logarithm, so host and device restart at the same iterations.
//
//   const LearningRateSchedule s = ParseLearningRateSchedule(ArgumentReader(def.arg()));
//   float lr = LearningRateAt(s, /*iter=*/1200);
//
// The schedule is trivially copyable, so a kernel takes it by value. Pure functions; thread-safe.
#ifndef BRAID_OPS_TRAIN_LEARNING_RATE_SCHEDULE_H_
#define BRAID_OPS_TRAIN_LEARNING_RATE_SCHEDULE_H_

#include <cmath>
#include <cstdint>

#include "ops/common/host_device.h"
#include "runtime/core/argument.h"

namespace braid {

// std::numbers::pi, spelled out because device code cannot read that variable template.
inline constexpr double kLearningRatePi = 3.141592653589793238462643383279502884;

// Cosine annealing's arguments (policy cosine, or compositeCosine's cosine_* arguments).
struct CosineSchedule {
  double max_lr = 1;
  double min_lr = 0;
  int64_t period = 1;  // max_iter for a single decay
  double t_mult = 1;   // > 0
  double lr_shrink = 1;
  bool single_decay = false;  // max_iter without period: one decay, then min_lr
};

// multistep's stepsizes a schedule holds (it is passed to a CUDA kernel by value).
inline constexpr int kMaxStepsizes = 32;

struct LearningRateSchedule {
  enum class Policy : int32_t {
    kFixed,
    kStep,
    kMultiStep,
    kExp,
    kInv,
    kPoly,
    kLinearWarmup,
    kConstantWarmup,
    kCosine,
    kCompositeCosine
  };
  Policy policy = Policy::kFixed;
  float base_lr = 0;  // base_lr * lr_scale, rounded to float as the CPU op always did
  int64_t stepsize = 1;
  double gamma = 1;
  double power = 1;           // inv, poly
  int64_t max_iter = 1;       // poly
  int32_t num_stepsizes = 0;  // multistep: the iterations where the rate is multiplied by gamma
  int64_t stepsizes[kMaxStepsizes] = {};  // ascending
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

// Where iteration t (>= 0) falls in SGDR's cycles: cycle k starts at
// start(k) = period (1 + m + ... + m^(k-1)) and lasts period * m^k iterations (m = t_mult > 0).
// With m < 1 (which Caffe2 accepts) the cycles shrink and their starts approach period / (1 - m),
// where the schedule ends: index -1 for an iteration there or later (Caffe2's logarithm is then of
// a number <= 0, its rate NaN).
struct CosineCycle {
  int64_t index = 0;
  double length = 1, offset = 0;  // the cycle's length, and t's offset into it
};

// Cycles of a shrinking schedule (m < 1) looked at before an iteration counts as past its end.
inline constexpr int kMaxShrinkingCycles = 2048;

// FindCosineCycle for 0 < m < 1: the starts added up one cycle at a time with correctly rounded
// operations, the same bits on host and device.
BRAID_HOST_DEVICE inline CosineCycle ShrinkingCosineCycle(int64_t t, int64_t period, double m) {
  const double at = static_cast<double>(t);
  double start = 0, length = static_cast<double>(period);
  for (int k = 0; k < kMaxShrinkingCycles && length > 0; ++k) {
    if (at < start + length) return {k, length, at - start};
    start += length;
    length = RoundedProduct(length, m);
  }
  return {-1, 1, 0};
}

// start(k) for an integer m >= 2, exact; INT64_MAX when it would not fit.
BRAID_HOST_DEVICE inline int64_t IntegerCycleStart(int64_t k, int64_t period, int64_t m) {
  constexpr int64_t kMax = INT64_MAX;
  int64_t start = 0, length = period;
  for (int64_t i = 0; i < k; ++i) {
    if (start > kMax - length || length > kMax / m) return kMax;
    start += length;
    length *= m;
  }
  return start;
}

// start(k) for another m > 1: period (m^k - 1) / (m - 1), m^k by squaring, with correctly rounded
// operations only (no libm, no FMA), so that the host and a device compute the same bits.
BRAID_HOST_DEVICE inline double RealCycleStart(int64_t k, int64_t period, double m) {
  double power = 1, base = m;
  for (int64_t e = k; e > 0; e /= 2) {
    if (e % 2 == 1) power = RoundedProduct(power, base);
    base = RoundedProduct(base, base);
  }
  return RoundedProduct(static_cast<double>(period), power - 1) / (m - 1);
}

BRAID_HOST_DEVICE inline double CycleStart(int64_t k, int64_t period, double m, bool integer) {
  return integer ? static_cast<double>(IntegerCycleStart(k, period, static_cast<int64_t>(m)))
                 : RealCycleStart(k, period, m);
}

// Cycles starting beyond this are never entered (an iteration counter saturates at INT64_MAX).
inline constexpr double kLastCycleStart = 9.2e18;

// The cycle's index comes from comparisons of t with cycle starts, not from
// floor(log(1 + t (m - 1) / period) / log(m)): a logarithm lands an ulp below an exact restart
// (period 100, t_mult 3: iteration 12100 starts cycle 5, the logarithms say 4), and the host's log
// and CUDA's differ. A logarithm only guesses the index; the starts decide. With an integer m
// (t_mult 2, 3, ...) every start is an exact integer; with another m the starts are computed by
// RealCycleStart, the same bits on host and device, so both pick the same cycle.
BRAID_HOST_DEVICE inline CosineCycle FindCosineCycle(int64_t t, int64_t period, double t_mult) {
  if (t < 0) t = 0;
  if (t_mult == 1.0) {
    return {t / period, static_cast<double>(period), static_cast<double>(t % period)};
  }
  if (t_mult < 1.0) return ShrinkingCosineCycle(t, period, t_mult);
  const bool integer =
      t_mult <= 4e18 && static_cast<double>(static_cast<int64_t>(t_mult)) == t_mult;
  const double guess = floor(log(1 + static_cast<double>(t) / period * (t_mult - 1)) / log(t_mult));
  int64_t k = guess > 0 && guess < 4e18 ? static_cast<int64_t>(guess) : 0;
  const double at = static_cast<double>(t);  // exact below 2^53
  while (k > 0 && CycleStart(k, period, t_mult, integer) > at) --k;
  double next = CycleStart(k + 1, period, t_mult, integer);
  while (next <= at && next < kLastCycleStart) next = CycleStart(++k + 1, period, t_mult, integer);
  const double start = CycleStart(k, period, t_mult, integer);
  return {k, next - start, at - start};
}

BRAID_HOST_DEVICE inline double CosineMultiplier(const CosineSchedule& c, int64_t iter) {
  const double period = static_cast<double>(c.period);
  const double t = static_cast<double>(iter);
  const CosineCycle cycle = c.single_decay ? CosineCycle{0, period, period < t ? period : t}
                                           : FindCosineCycle(iter, c.period, c.t_mult);
  if (cycle.index < 0) return nan("");  // past a shrinking schedule's end, as in Caffe2
  const double cosine = 0.5 * (1 + cos(kLearningRatePi * cycle.offset / cycle.length));
  return pow(c.lr_shrink, static_cast<double>(cycle.index)) *
         (c.min_lr + (c.max_lr - c.min_lr) * cosine);
}

BRAID_HOST_DEVICE inline double LearningRateMultiplier(const LearningRateSchedule& s,
                                                       int64_t iter) {
  using Policy = LearningRateSchedule::Policy;
  switch (s.policy) {
    case Policy::kFixed:
      return 1.0;
    case Policy::kStep:
      return pow(s.gamma, static_cast<double>(iter / s.stepsize));
    case Policy::kMultiStep: {
      int passed = 0;
      while (passed < s.num_stepsizes && iter >= s.stepsizes[passed]) ++passed;
      return pow(s.gamma, static_cast<double>(passed));
    }
    case Policy::kExp:
      return pow(s.gamma, static_cast<double>(iter));
    case Policy::kInv:
      return pow(1 + s.gamma * static_cast<double>(iter), -s.power);
    case Policy::kPoly:
      if (iter >= s.max_iter) return 0.0;
      return pow(1 - static_cast<double>(iter) / static_cast<double>(s.max_iter), s.power);
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
