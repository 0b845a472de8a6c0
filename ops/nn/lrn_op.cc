#include "ops/nn/lrn_op.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/common/op_checks.h"
#include "ops/common/parallel.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"
#include "runtime/exec/scratch.h"

namespace braid {
namespace {

struct LrnParams {
  int64_t size = 0;
  float alpha = 0.f, beta = 0.f, bias = 1.f;
  int64_t n = 0, c = 0, hw = 0;  // X as [n, c, hw]
};

LrnParams ComputeLrnParams(const OperatorDef& def, const ShapeInfo& x) {
  const ArgumentReader args(def.arg());
  const std::string order = args.Get<std::string>("order", "NCHW");
  if (order != "NCHW") {
    ThrowInvalidArgument("LRN: order '" + order + "' is not supported, only NCHW");
  }
  LrnParams p;
  p.size = args.Get<int64_t>("size", 0);
  p.alpha = args.Get<float>("alpha", 0.f);
  p.beta = args.Get<float>("beta", 0.f);
  p.bias = args.Get<float>("bias", 1.f);
  if (p.size < 1 || p.size % 2 == 0) {
    ThrowInvalidArgument("LRN: argument 'size' " + std::to_string(p.size) +
                         " must be an odd number >= 1 (the channels of the window)");
  }
  if (x.dtype != DType::kFloat32 || x.dims.size() != 4) {
    ThrowInvalidArgument("X " + DescribeBlob(def.input(0), x) +
                         " must be a float32 4-D tensor (NCHW)");
  }
  p.n = x.dims[0];
  p.c = x.dims[1];
  p.hw = x.dims[2] * x.dims[3];
  return p;
}

void CheckLike(const OperatorDef& def, const std::vector<ShapeInfo>& in, int i, const char* role) {
  if (in[i].dtype != DType::kFloat32 || in[i].dims != in[0].dims) {
    ThrowInvalidArgument(std::string(role) + " " + DescribeBlob(def.input(i), in[i]) +
                         " must have the type and shape of X " + DescribeBlob(def.input(0), in[0]));
  }
}

// Adds, for every channel c of one sample, the sum of `in` over the channels of c's window
// ([c - half, c + half] within [0, C)) to `out`; both are [C, hw]. Summing the window directly
// costs `size` passes but stays exact (a running sum drifts) and reads whole planes.
void AddWindowSums(const LrnParams& p, const float* in, float* out) {
  const int64_t half = (p.size - 1) / 2;
  for (int64_t c = 0; c < p.c; ++c) {
    float* o = out + c * p.hw;
    for (int64_t d = std::max<int64_t>(c - half, 0); d <= std::min(c + half, p.c - 1); ++d) {
      const float* i = in + d * p.hw;
      for (int64_t j = 0; j < p.hw; ++j) o[j] += i[j];
    }
  }
}

// scale of one sample; `squares` is [c, hw] scratch.
void ComputeScale(const LrnParams& p, const float* x, float* squares, float* scale) {
  const int64_t sample = p.c * p.hw;
  const float alpha_over_size = p.alpha / static_cast<float>(p.size);
  for (int64_t i = 0; i < sample; ++i) squares[i] = x[i] * x[i];
  std::fill_n(scale, sample, 0.f);
  AddWindowSums(p, squares, scale);
  for (int64_t i = 0; i < sample; ++i) scale[i] = p.bias + alpha_over_size * scale[i];
}

// Calls run(n) for each sample, samples spread over the OpenMP team.
template <typename Run>
void ForEachSample(const LrnParams& p, Run run) {
  const int64_t sample = p.c * p.hw;
  ParallelFor(p.n * sample, [&](int64_t begin, int64_t end) {
    // A sample belongs to the chunk holding its first element.
    for (int64_t n = (begin + sample - 1) / sample; n * sample < end; ++n) run(n);
  });
}

// dX of one sample; `ratio` and `window` are [c, hw] scratch. Channel c lies in the windows of
// the channels c' in [c - half, c + half]: the same symmetric window.
void LrnBackwardSample(const LrnParams& p, const float* x, const float* y, const float* dy,
                       const float* scale, float* ratio, float* window, float* dx) {
  const int64_t sample = p.c * p.hw;
  const float cache_ratio = 2.f * p.alpha * p.beta / static_cast<float>(p.size);
  for (int64_t i = 0; i < sample; ++i) ratio[i] = dy[i] * y[i] / scale[i];
  std::fill_n(window, sample, 0.f);
  AddWindowSums(p, ratio, window);
  for (int64_t i = 0; i < sample; ++i) {
    dx[i] = dy[i] * std::pow(scale[i], -p.beta) - cache_ratio * x[i] * window[i];
  }
}

std::vector<ShapeInfo> InferLrnShape(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  if (in.size() != 1) return {};  // reported by OpSchema::Verify
  ComputeLrnParams(def, in[0]);
  return std::vector<ShapeInfo>(def.output_size(), in[0]);
}

// Inputs X, Y, dY[, scale].
std::vector<ShapeInfo> InferLrnGradientShape(const OperatorDef& def,
                                             const std::vector<ShapeInfo>& in) {
  if (in.size() < 3) return {};  // reported by OpSchema::Verify
  ComputeLrnParams(def, in[0]);
  CheckLike(def, in, 1, "Y");
  CheckLike(def, in, 2, "dY");
  if (in.size() == 4) CheckLike(def, in, 3, "scale");
  return {in[0]};
}

GradientOps LrnGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  std::vector<std::string> inputs{r.op.input(0), r.op.output(0), r.output_grads[0]};
  if (r.op.output_size() == 2) inputs.push_back(r.op.output(1));
  return {{MakeGradientOp(r.op, "LRNGradient", inputs, {r.input_grads[0]})}, {true}};
}

}  // namespace

void LRNOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  const LrnParams p = ComputeLrnParams(def(), ShapeOf(Input(0)));
  const int64_t numel = Input(0).numel(), sample = p.c * p.hw;
  // Scratch: the squares and, without a second output, the scale.
  float* scratch = static_cast<float*>(
      ThreadScratch().Reserve((OutputSize() == 2 ? numel : 2 * numel) * sizeof(float)));
  const float* x = Input(0).data<float>();
  float* y = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
  float* scale = OutputSize() == 2
                     ? Output(1, DType::kFloat32, Input(0).shape())->mutable_data<float>()
                     : scratch + numel;
  ForEachSample(p, [&](int64_t n) {
    const int64_t o = n * sample;
    ComputeScale(p, x + o, scratch + o, scale + o);
    for (int64_t i = o; i < o + sample; ++i) y[i] = x[i] * std::pow(scale[i], -p.beta);
  });
}

void LRNGradientOp::Run() {
  for (int i = 0; i < InputSize(); ++i) CheckInputType(*this, i, {DType::kFloat32});
  const std::vector<ShapeInfo> in = InputShapeInfos(*this);
  InferLrnGradientShape(def(), in);
  const LrnParams p = ComputeLrnParams(def(), in[0]);
  const int64_t numel = Input(0).numel(), sample = p.c * p.hw;
  const bool has_scale = InputSize() == 4;
  // Scratch: ratio and window sums and, without the scale input, the scale.
  float* scratch =
      static_cast<float*>(ThreadScratch().Reserve((has_scale ? 2 : 3) * numel * sizeof(float)));
  float* ratio = scratch;
  float* window = scratch + numel;
  float* computed_scale = has_scale ? nullptr : scratch + 2 * numel;
  const float* scale = has_scale ? Input(3).data<float>() : computed_scale;
  const float* x = Input(0).data<float>();
  const float* y = Input(1).data<float>();
  const float* dy = Input(2).data<float>();
  float* dx = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
  ForEachSample(p, [&](int64_t n) {
    const int64_t o = n * sample;
    // The squares go to `window`, free until LrnBackwardSample fills it.
    if (!has_scale) ComputeScale(p, x + o, window + o, computed_scale + o);
    LrnBackwardSample(p, x + o, y + o, dy + o, scale + o, ratio + o, window + o, dx + o);
  });
}

BRAID_OPERATOR_SCHEMA(LRN)
    .Arg("order", ArgKind::kString)
    .Arg("size", ArgKind::kInt)
    .Arg("alpha", ArgKind::kFloat)
    .Arg("beta", ArgKind::kFloat)
    .Arg("bias", ArgKind::kFloat)
    .NumInputs(1)
    .NumOutputs(1, 2)
    .TensorInference(InferLrnShape)
    .SetDoc(
        "Local response normalisation across channels, NCHW: scale = bias + alpha/size * (sum of "
        "X^2 over `size` channels centred on c); Y = X * scale^-beta. Optional 2nd output: scale. "
        "Args: size (odd, required), alpha 0, beta 0, bias 1, order=NCHW.");

BRAID_OPERATOR_SCHEMA(LRNGradient)
    .ArgsOf("LRN")
    .NumInputs(3, 4)
    .NumOutputs(1)
    .TensorInference(InferLrnGradientShape)
    .SetDoc("LRN's gradient: inputs X, Y, dY[, scale]; output dX. LRN's arguments.");

BRAID_REGISTER_CPU_OPERATOR(LRN, LRNOp);
BRAID_REGISTER_CPU_OPERATOR(LRNGradient, LRNGradientOp);
BRAID_REGISTER_GRADIENT(LRN, LrnGradient);

}  // namespace braid
