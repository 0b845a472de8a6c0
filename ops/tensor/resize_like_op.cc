#include "ops/tensor/resize_like_op.h"

#include "ops/common/op_checks.h"
#include "ops/tensor/reshape_op.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

std::vector<ShapeInfo> InferResizeLikeShape(const OperatorDef& def,
                                            const std::vector<ShapeInfo>& in) {
  if (in.size() != 2) return {};  // reported by OpSchema::Verify
  if (in[0].numel() != in[1].numel()) {
    ThrowInvalidArgument("input " + DescribeBlob(def.input(0), in[0]) +
                         " cannot take the shape of " + DescribeBlob(def.input(1), in[1]) +
                         ": element counts differ");
  }
  return {ShapeInfo{in[0].dtype, in[1].dims, true}};
}

GradientOps ResizeLikeGradientOps(const GradientRequest& r) {
  const OperatorDef& op = r.op;
  if (op.output(0) == op.input(0)) {
    ThrowInvalidArgument("ResizeLike in place on '" + op.input(0) +
                         "' has no gradient: the input's shape is overwritten");
  }
  return GradientOps{
      {MakeGradientOp(op, "ResizeLike", {r.output_grads[0], op.input(0)}, {r.input_grads[0]})},
      {true, false}};
}

}  // namespace

void ResizeLikeOp::Run() {
  const Tensor& data = Input(0);
  CheckInputType(*this, 0, {data.dtype()});
  const std::vector<ShapeInfo> out = InferResizeLikeShape(def(), InputShapeInfos(*this));
  CopyReshaped(data, Output(0), out[0].dims);
}

BRAID_OPERATOR_SCHEMA(ResizeLike)
    .NoArgs()
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferResizeLikeShape)
    .SetDoc("Y = input 0's data with input 1's shape (equal element counts).");

BRAID_REGISTER_CPU_OPERATOR(ResizeLike, ResizeLikeOp);
#ifdef BRAID_WITH_CUDA  // CopyReshaped copies on the current stream
BRAID_REGISTER_OPERATOR(ResizeLike, kCuda, "", ResizeLikeOp);
#endif
BRAID_REGISTER_GRADIENT(ResizeLike, ResizeLikeGradientOps);

}  // namespace braid
