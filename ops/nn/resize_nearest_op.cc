#include "ops/nn/resize_nearest_op.h"

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

struct ResizeShapes {
  float height_scale = 1.f, width_scale = 1.f;
  std::vector<int64_t> x_dims, y_dims;

  int64_t planes() const { return x_dims[0] * x_dims[1]; }
  // The input row (column) that output row (column) `out` copies.
  int64_t SourceRow(int64_t out) const {
    return std::min<int64_t>(static_cast<int64_t>(static_cast<float>(out) / height_scale),
                             x_dims[2] - 1);
  }
  int64_t SourceColumn(int64_t out) const {
    return std::min<int64_t>(static_cast<int64_t>(static_cast<float>(out) / width_scale),
                             x_dims[3] - 1);
  }
};

// `x` is the blob at input `x_index` of `def` (X for the op, input 1 for its gradient).
ResizeShapes ComputeResizeShapes(const OperatorDef& def, const ShapeInfo& x, int x_index) {
  const ArgumentReader args(def.arg());
  const std::string order = args.Get<std::string>("order", "NCHW");
  if (order != "NCHW") {
    ThrowInvalidArgument("ResizeNearest: order '" + order + "' is not supported, only NCHW");
  }
  ResizeShapes s;
  s.height_scale = args.Get<float>("height_scale", 1.f);
  s.width_scale = args.Get<float>("width_scale", 1.f);
  if (!(s.height_scale > 0.f) || !(s.width_scale > 0.f)) {
    ThrowInvalidArgument("ResizeNearest: height_scale " + std::to_string(s.height_scale) +
                         " and width_scale " + std::to_string(s.width_scale) + " must be > 0");
  }
  if (x.dtype != DType::kFloat32 || x.dims.size() != 4) {
    ThrowInvalidArgument("X " + DescribeBlob(def.input(x_index), x) +
                         " must be a float32 4-D tensor (NCHW)");
  }
  s.x_dims = x.dims;
  s.y_dims = {x.dims[0], x.dims[1],
              static_cast<int64_t>(static_cast<float>(x.dims[2]) * s.height_scale),
              static_cast<int64_t>(static_cast<float>(x.dims[3]) * s.width_scale)};
  return s;
}

// Inputs dY, X.
ResizeShapes ComputeResizeGradientShapes(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  const ResizeShapes s = ComputeResizeShapes(def, in[1], 1);
  if (in[0].dtype != DType::kFloat32 || in[0].dims != s.y_dims) {
    ThrowInvalidArgument("dY " + DescribeBlob(def.input(0), in[0]) + " must be float32" +
                         DimsText(s.y_dims) + ", the shape ResizeNearest makes of X " +
                         DescribeBlob(def.input(1), in[1]));
  }
  return s;
}

GradientOps ResizeNearestGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  return {{MakeGradientOp(r.op, "ResizeNearestGradient", {r.output_grads[0], r.op.input(0)},
                          {r.input_grads[0]})},
          {true}};
}

}  // namespace

void ResizeNearestOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  const ResizeShapes s = ComputeResizeShapes(def(), ShapeOf(Input(0)), 0);
  const int64_t in_h = s.x_dims[2], in_w = s.x_dims[3], out_h = s.y_dims[2], out_w = s.y_dims[3];
  const float* x = Input(0).data<float>();
  float* y = Output(0, DType::kFloat32, s.y_dims)->mutable_data<float>();
  for (int64_t p = 0; p < s.planes(); ++p) {
    const float* plane = x + p * in_h * in_w;
    for (int64_t r = 0; r < out_h; ++r) {
      const float* row = plane + s.SourceRow(r) * in_w;
      for (int64_t c = 0; c < out_w; ++c) *y++ = row[s.SourceColumn(c)];
    }
  }
}

void ResizeNearestGradientOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kFloat32});
  const ResizeShapes s = ComputeResizeGradientShapes(def(), InputShapeInfos(*this));
  const int64_t in_h = s.x_dims[2], in_w = s.x_dims[3], out_h = s.y_dims[2], out_w = s.y_dims[3];
  const float* dy = Input(0).data<float>();
  Tensor* out = Output(0, DType::kFloat32, s.x_dims);
  float* dx = out->mutable_data<float>();
  std::fill_n(dx, out->numel(), 0.f);
  for (int64_t p = 0; p < s.planes(); ++p) {
    float* plane = dx + p * in_h * in_w;
    for (int64_t r = 0; r < out_h; ++r) {
      float* row = plane + s.SourceRow(r) * in_w;
      for (int64_t c = 0; c < out_w; ++c) row[s.SourceColumn(c)] += *dy++;
    }
  }
}

BRAID_OPERATOR_SCHEMA(ResizeNearest)
    .Arg("order", ArgKind::kString)
    .Arg("height_scale", ArgKind::kFloat)
    .Arg("width_scale", ArgKind::kFloat)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 1) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      return std::vector<ShapeInfo>{
          {DType::kFloat32, ComputeResizeShapes(def, in[0], 0).y_dims, true}};
    })
    .SetDoc(
        "Nearest-neighbour resize, NCHW: X [N,C,H,W] -> Y [N,C,int(H*height_scale),"
        "int(W*width_scale)]. Args: width_scale 1, height_scale 1, order=NCHW.");

BRAID_OPERATOR_SCHEMA(ResizeNearestGradient)
    .ArgsOf("ResizeNearest")
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 2) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      return std::vector<ShapeInfo>{
          {DType::kFloat32, ComputeResizeGradientShapes(def, in).x_dims, true}};
    })
    .SetDoc("ResizeNearest's gradient: inputs dY, X; output dX. ResizeNearest's arguments.");

BRAID_REGISTER_CPU_OPERATOR(ResizeNearest, ResizeNearestOp);
BRAID_REGISTER_CPU_OPERATOR(ResizeNearestGradient, ResizeNearestGradientOp);
BRAID_REGISTER_GRADIENT(ResizeNearest, ResizeNearestGradient);

}  // namespace braid
