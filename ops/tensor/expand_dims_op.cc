#include "ops/tensor/expand_dims_op.h"

#include <string>

#include "ops/common/op_checks.h"
#include "ops/tensor/reshape_op.h"
#include "ops/tensor/squeeze_op.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {

std::vector<int64_t> ExpandedDims(const OperatorDef& def, const ShapeInfo& x) {
  const std::vector<int> dims = SortedDimsArgument(def);
  const size_t ndim = x.dims.size() + dims.size();
  if (static_cast<size_t>(dims.back()) >= ndim) {
    ThrowInvalidArgument("argument 'dims' names dim " + std::to_string(dims.back()) +
                         ", but input " + DescribeBlob(def.input(0), x) + " expands to " +
                         std::to_string(ndim) + " dims");
  }
  std::vector<int64_t> expanded = x.dims;
  for (int d : dims) expanded.insert(expanded.begin() + d, 1);
  return expanded;
}

void ExpandDimsOp::Run() {
  const Tensor& x = Input(0);
  CheckInputType(*this, 0, {x.dtype()});
  CopyReshaped(x, Output(0), ExpandedDims(def(), ShapeOf(x)));
}

namespace {

GradientOps ExpandDimsGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  return {{MakeGradientOp(r.op, "Squeeze", {r.output_grads[0]}, {r.input_grads[0]})}, {true}};
}

}  // namespace

BRAID_OPERATOR_SCHEMA(ExpandDims)
    .Arg("dims", ArgKind::kInts)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 1) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      return std::vector<ShapeInfo>{ShapeInfo{in[0].dtype, ExpandedDims(def, in[0]), true}};
    })
    .SetDoc("Inserts size-1 dims at the ids listed in `dims` (non-negative ids of the output).");

BRAID_REGISTER_CPU_OPERATOR(ExpandDims, ExpandDimsOp);
BRAID_REGISTER_GRADIENT(ExpandDims, ExpandDimsGradient);

}  // namespace braid
