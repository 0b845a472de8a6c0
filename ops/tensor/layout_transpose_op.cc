#include "ops/tensor/layout_transpose_op.h"

#include <numeric>

#include "ops/common/op_checks.h"
#include "ops/tensor/transpose_op.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

template <bool kToNHWC>
std::vector<ShapeInfo> InferLayoutTransposeShape(const OperatorDef& def,
                                                 const std::vector<ShapeInfo>& in) {
  if (in.size() != 1) return {};  // reported by OpSchema::Verify
  const std::vector<int> axes = LayoutTransposeAxes(def, in[0], kToNHWC);
  return {ShapeInfo{in[0].dtype, PermutedDims(in[0].dims, axes), true}};
}

template <bool kToNHWC>
GradientOps LayoutTransposeGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  return {{MakeGradientOp(r.op, kToNHWC ? "NHWC2NCHW" : "NCHW2NHWC", {r.output_grads[0]},
                          {r.input_grads[0]})},
          {true}};
}

}  // namespace

std::vector<int> LayoutTransposeAxes(const OperatorDef& def, const ShapeInfo& x, bool to_nhwc) {
  const int ndim = static_cast<int>(x.dims.size());
  if (ndim < 3) {
    ThrowInvalidArgument("input " + DescribeBlob(def.input(0), x) +
                         " must have at least 3 dims (N, C and spatial dims)");
  }
  std::vector<int> axes(ndim);
  axes[0] = 0;
  if (to_nhwc) {  // [0, 2, ..., ndim - 1, 1]
    std::iota(axes.begin() + 1, axes.end() - 1, 2);
    axes[ndim - 1] = 1;
  } else {  // [0, ndim - 1, 1, ..., ndim - 2]
    axes[1] = ndim - 1;
    std::iota(axes.begin() + 2, axes.end(), 1);
  }
  return axes;
}

template <bool kToNHWC>
void LayoutTransposeOp<kToNHWC>::Run() {
  const Tensor& x = Input(0);
  CheckInputType(*this, 0, {x.dtype()});
  TransposeTensor(x, LayoutTransposeAxes(def(), ShapeOf(x), kToNHWC), Output(0));
}

BRAID_OPERATOR_SCHEMA(NCHW2NHWC)
    .NoArgs()
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(InferLayoutTransposeShape<true>)
    .SetDoc("Moves the channel dim last: X [N,C,H,W] -> Y [N,H,W,C] (rank >= 3).");
BRAID_OPERATOR_SCHEMA(NHWC2NCHW)
    .NoArgs()
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(InferLayoutTransposeShape<false>)
    .SetDoc("Moves the channel dim second: X [N,H,W,C] -> Y [N,C,H,W] (rank >= 3).");

BRAID_REGISTER_CPU_OPERATOR(NCHW2NHWC, LayoutTransposeOp<true>);
BRAID_REGISTER_CPU_OPERATOR(NHWC2NCHW, LayoutTransposeOp<false>);
BRAID_REGISTER_GRADIENT(NCHW2NHWC, LayoutTransposeGradient<true>);
BRAID_REGISTER_GRADIENT(NHWC2NCHW, LayoutTransposeGradient<false>);

}  // namespace braid
