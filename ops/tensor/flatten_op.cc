#include "ops/tensor/flatten_op.h"

#include "ops/common/op_checks.h"
#include "ops/tensor/reshape_op.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

std::vector<int64_t> FlattenedDims(const OperatorDef& def, const ShapeInfo& x) {
  const int axis = CanonicalAxis(def, "axis", 1, static_cast<int>(x.dims.size()), true);
  return {SizeToDim(x.dims, axis), SizeFromDim(x.dims, axis)};
}

GradientOps FlattenGradientOps(const GradientRequest& r) {
  const OperatorDef& op = r.op;
  OperatorDef back =
      MakeGradientOp(op, "ResizeLike", {r.output_grads[0], op.input(0)}, {r.input_grads[0]});
  back.clear_arg();  // ResizeLike takes no axis: the shape is input 1's
  return GradientOps{{back}, {true}};
}

}  // namespace

void FlattenOp::Run() {
  const Tensor& x = Input(0);
  CheckInputType(*this, 0, {x.dtype()});
  CopyReshaped(x, Output(0), FlattenedDims(def(), ShapeOf(x)));
}

BRAID_OPERATOR_SCHEMA(Flatten)
    .Arg("axis", ArgKind::kInt)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 1) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      return std::vector<ShapeInfo>{ShapeInfo{in[0].dtype, FlattenedDims(def, in[0]), true}};
    })
    .SetDoc("Reshapes X to 2-D [prod(dims before axis), prod(dims from axis)], axis default 1.");

BRAID_REGISTER_CPU_OPERATOR(Flatten, FlattenOp);
#ifdef BRAID_WITH_CUDA  // CopyReshaped copies on the current stream
BRAID_REGISTER_OPERATOR(Flatten, kCuda, "", FlattenOp);
#endif
BRAID_REGISTER_GRADIENT(Flatten, FlattenGradientOps);

}  // namespace braid
