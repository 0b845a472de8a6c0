#include "ops/train/iter_op.h"

#include <limits>

#include "ops/common/op_checks.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/shape_inference.h"

namespace braid {

ShapeInfo IterCounterShape(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  if (in.empty()) return ShapeInfo{DType::kInt64, {1}, true};
  if (in[0].dtype != DType::kInt64 || in[0].numel() != 1) {
    ThrowInvalidArgument("counter " + DescribeBlob(def.output(0), in[0]) +
                         " must be an int64 with one element (ConstantFill it with dtype 10)");
  }
  return in[0];
}

void IterOp::Run() {
  Tensor* counter = Output(0);
  const bool fresh = !counter->has_storage();
  if (fresh) counter->Resize(DType::kInt64, {1});
  IterCounterShape(def(), {ShapeOf(*counter)});
  int64_t* value = counter->mutable_data<int64_t>();
  if (fresh) *value = 0;
  if (*value == std::numeric_limits<int64_t>::max()) {
    ThrowInvalidArgument("counter '" + def().output(0) + "' reached the maximum iteration count");
  }
  ++*value;
}

BRAID_OPERATOR_SCHEMA(Iter)
    .NoArgs()
    .NumInputs(0, 1)
    .NumOutputs(1)
    .EnforceInplace({{0, 0}})
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      return std::vector<ShapeInfo>{IterCounterShape(def, in)};
    })
    .SetDoc("Increments the int64 counter in place (a never-written counter starts from 0).");

BRAID_REGISTER_CPU_OPERATOR(Iter, IterOp);
BRAID_NO_GRADIENT(Iter);

}  // namespace braid
