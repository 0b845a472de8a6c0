#include "ops/tensor/squeeze_op.h"

#include <algorithm>
#include <string>

#include "ops/common/op_checks.h"
#include "ops/tensor/reshape_op.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {

std::vector<int> SortedDimsArgument(const OperatorDef& def) {
  std::vector<int> dims = ArgumentReader(def.arg()).GetList<int>("dims");
  if (dims.empty()) ThrowInvalidArgument(def.type() + " needs the argument 'dims' (dim ids)");
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  if (dims.front() < 0) {
    ThrowInvalidArgument("argument 'dims' holds " + std::to_string(dims.front()) + ": " +
                         def.type() + " takes non-negative dim ids only");
  }
  return dims;
}

std::vector<int64_t> SqueezedDims(const OperatorDef& def, const ShapeInfo& x) {
  const std::vector<int> dims = SortedDimsArgument(def);
  const int ndim = static_cast<int>(x.dims.size());
  if (dims.back() >= ndim) {
    ThrowInvalidArgument("argument 'dims' names dim " + std::to_string(dims.back()) +
                         ", but input " + DescribeBlob(def.input(0), x) + " has " +
                         std::to_string(ndim) + " dims");
  }
  std::vector<int64_t> squeezed;
  size_t next = 0;
  for (int d = 0; d < ndim; ++d) {
    if (next < dims.size() && dims[next] == d) {
      ++next;
      if (x.dims[d] != 1) {
        ThrowInvalidArgument("cannot squeeze dim " + std::to_string(d) + " of input " +
                             DescribeBlob(def.input(0), x) + ": its size is not 1");
      }
      continue;
    }
    squeezed.push_back(x.dims[d]);
  }
  return squeezed;
}

void SqueezeOp::Run() {
  const Tensor& x = Input(0);
  CheckInputType(*this, 0, {x.dtype()});
  CopyReshaped(x, Output(0), SqueezedDims(def(), ShapeOf(x)));
}

namespace {

GradientOps SqueezeGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  return {{MakeGradientOp(r.op, "ExpandDims", {r.output_grads[0]}, {r.input_grads[0]})}, {true}};
}

}  // namespace

BRAID_OPERATOR_SCHEMA(Squeeze)
    .Arg("dims", ArgKind::kInts)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      if (in.size() != 1) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
      return std::vector<ShapeInfo>{ShapeInfo{in[0].dtype, SqueezedDims(def, in[0]), true}};
    })
    .SetDoc("Removes the size-1 dims listed in `dims` (non-negative ids).");

BRAID_REGISTER_CPU_OPERATOR(Squeeze, SqueezeOp);
BRAID_REGISTER_GRADIENT(Squeeze, SqueezeGradient);

}  // namespace braid
