#include "ops/tensor/shape_op.h"

#include <string>
#include <vector>

#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

// The dims Shape outputs for an input of `x`'s shape.
std::vector<int64_t> ShapeOutput(const OperatorDef& def, const ShapeInfo& x) {
  const std::vector<int64_t> axes = ArgumentReader(def.arg()).GetList<int64_t>("axes");
  if (axes.empty()) return x.dims;
  const int64_t ndim = static_cast<int64_t>(x.dims.size());
  std::vector<int64_t> dims;
  dims.reserve(axes.size());
  for (const int64_t axis : axes) {
    if (axis < 0 || axis >= ndim) {
      const std::string has =
          ndim == 0 ? " has no dims" : " has dims 0 to " + std::to_string(ndim - 1);
      ThrowInvalidArgument("argument 'axes' holds " + std::to_string(axis) + ", but input " +
                           DescribeBlob(def.input(0), x) + has);
    }
    dims.push_back(x.dims[axis]);
  }
  return dims;
}

std::vector<ShapeInfo> InferShapeShape(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  if (in.size() != 1) return {};  // reported by OpSchema::Verify
  const int64_t n = static_cast<int64_t>(ShapeOutput(def, in[0]).size());
  return {ShapeInfo{DType::kInt64, {n}, true}};
}

}  // namespace

void ShapeOp::Run() {
  const std::vector<int64_t> dims = ShapeOutput(def(), ShapeOf(Input(0)));
  int64_t* out = Output(0, DType::kInt64, {static_cast<int64_t>(dims.size())})
                     ->mutable_data<int64_t>();
  for (size_t i = 0; i < dims.size(); ++i) out[i] = dims[i];
}

BRAID_OPERATOR_SCHEMA(Shape)
    .Arg("axes", ArgKind::kInts)
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(InferShapeShape)
    .SetDoc("Y = input 0's dims (int64, 1-D); with `axes`, only those dims, in that order.");

BRAID_REGISTER_CPU_OPERATOR(Shape, ShapeOp);
BRAID_NO_GRADIENT(Shape);

}  // namespace braid
