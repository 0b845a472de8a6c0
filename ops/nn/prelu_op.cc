#include "ops/nn/prelu_op.h"

#include <algorithm>
#include <string>
#include <vector>

#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

// How X's elements map to slopes: X is [outer, channels, inner]; a shared slope has channels 1.
struct SlopeLayout {
  int64_t outer = 1, channels = 1, inner = 1;
  bool shared = false;
};

// Checks X (input 0) and Slope (input 1) of `def` and returns how they line up.
SlopeLayout ComputeSlopeLayout(const OperatorDef& def, const ShapeInfo& x, const ShapeInfo& slope) {
  const std::string order = ArgumentReader(def.arg()).Get<std::string>("order", "NCHW");
  if (order != "NCHW" && order != "NHWC") {
    ThrowInvalidArgument("order '" + order + "' must be NCHW or NHWC");
  }
  if (x.dtype != DType::kFloat32 || slope.dtype != DType::kFloat32) {
    ThrowInvalidArgument("X " + DescribeBlob(def.input(0), x) + " and Slope " +
                         DescribeBlob(def.input(1), slope) + " must be float32");
  }
  SlopeLayout s;
  s.shared = slope.numel() == 1;
  if (s.shared) {
    s.inner = x.numel();
    return s;
  }
  const int ndim = static_cast<int>(x.dims.size());
  if (ndim < 2 || slope.dims.size() != 1) {
    ThrowInvalidArgument("Slope " + DescribeBlob(def.input(1), slope) +
                         " must hold one value, or one per channel of X " +
                         DescribeBlob(def.input(0), x) + " (which then needs at least 2 dims)");
  }
  const int channel_dim = order == "NCHW" ? 1 : ndim - 1;
  s.channels = x.dims[channel_dim];
  if (slope.dims[0] != s.channels) {
    ThrowInvalidArgument("Slope " + DescribeBlob(def.input(1), slope) +
                         " must have 1 or C=" + std::to_string(s.channels) + " values (dim " +
                         std::to_string(channel_dim) + " of X " + DescribeBlob(def.input(0), x) +
                         ", order " + order + ")");
  }
  s.outer = SizeToDim(x.dims, channel_dim);
  s.inner = SizeFromDim(x.dims, channel_dim + 1);
  return s;
}

std::vector<ShapeInfo> InferPReluShape(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  if (in.size() != 2) return {};  // reported by OpSchema::Verify
  ComputeSlopeLayout(def, in[0], in[1]);
  return {in[0]};
}

// Inputs Y, dY, X, Slope.
std::vector<ShapeInfo> InferPReluGradientShape(const OperatorDef& def,
                                               const std::vector<ShapeInfo>& in) {
  if (in.size() != 4) return {};  // reported by OpSchema::Verify
  ComputeSlopeLayout(def, in[2], in[3]);
  for (int i : {0, 1}) {
    if (in[i].dtype != DType::kFloat32 || in[i].dims != in[2].dims) {
      ThrowInvalidArgument(std::string(i == 0 ? "Y " : "dY ") + DescribeBlob(def.input(i), in[i]) +
                           " must have the type and shape of X " +
                           DescribeBlob(def.input(2), in[2]));
    }
  }
  return {in[2], in[3]};
}

GradientOps PReluGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false, false}};
  if (r.op.output(0) == r.op.input(0)) {
    ThrowInvalidArgument("PRelu '" + r.op.output(0) +
                         "' computed in place has no gradient: PReluGradient reads X, which Y "
                         "overwrote; give Y a name of its own");
  }
  return {{MakeGradientOp(r.op, "PReluGradient",
                          {r.op.output(0), r.output_grads[0], r.op.input(0), r.op.input(1)},
                          {r.input_grads[0], r.input_grads[1]})},
          {true, true}};
}

}  // namespace

void PReluOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kFloat32});
  const SlopeLayout s = ComputeSlopeLayout(def(), ShapeOf(Input(0)), ShapeOf(Input(1)));
  const float* x = Input(0).data<float>();
  const float* slope = Input(1).data<float>();
  float* y = Output(0, DType::kFloat32, Input(0).shape())->mutable_data<float>();
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t c = 0; c < s.channels; ++c) {
      const float a = slope[c];
      const int64_t begin = (o * s.channels + c) * s.inner;
      for (int64_t i = begin; i < begin + s.inner; ++i) y[i] = x[i] > 0.f ? x[i] : a * x[i];
    }
  }
}

void PReluGradientOp::Run() {
  for (int i = 0; i < 4; ++i) CheckInputType(*this, i, {DType::kFloat32});
  InferPReluGradientShape(def(), InputShapeInfos(*this));
  const SlopeLayout s = ComputeSlopeLayout(def(), ShapeOf(Input(2)), ShapeOf(Input(3)));
  const float* dy = Input(1).data<float>();
  const float* x = Input(2).data<float>();
  const float* slope = Input(3).data<float>();
  float* dx = Output(0, DType::kFloat32, Input(2).shape())->mutable_data<float>();
  float* dslope = Output(1, DType::kFloat32, Input(3).shape())->mutable_data<float>();
  std::vector<double> sums(s.channels, 0.0);  // double: a shared slope sums every element
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t c = 0; c < s.channels; ++c) {
      const float a = slope[c];
      const int64_t begin = (o * s.channels + c) * s.inner;
      double sum = 0.0;
      for (int64_t i = begin; i < begin + s.inner; ++i) {
        const float d = dy[i];  // read before the write: dX may be dY
        sum += x[i] > 0.f ? 0.0 : static_cast<double>(d) * x[i];
        dx[i] = x[i] > 0.f ? d : a * d;
      }
      sums[c] += sum;
    }
  }
  for (int64_t c = 0; c < s.channels; ++c) dslope[c] = static_cast<float>(sums[c]);
}

BRAID_OPERATOR_SCHEMA(PRelu)
    .Arg("order", ArgKind::kString)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferPReluShape)
    .SetDoc(
        "Y = X where X > 0, else Slope * X; Slope [C] per channel (dim 1, or the last dim for "
        "order=NHWC) or [1] shared.");

BRAID_OPERATOR_SCHEMA(PReluGradient)
    .ArgsOf("PRelu")
    .NumInputs(4)
    .NumOutputs(2)
    .AllowInplace({{1, 0}})
    .TensorInference(InferPReluGradientShape)
    .SetDoc("PRelu's gradient: inputs Y, dY, X, Slope; outputs dX, dSlope.");

BRAID_REGISTER_CPU_OPERATOR(PRelu, PReluOp);
BRAID_REGISTER_CPU_OPERATOR(PReluGradient, PReluGradientOp);
BRAID_REGISTER_GRADIENT(PRelu, PReluGradient);

}  // namespace braid
