#include "ops/math/add_op.h"

#include "runtime/op_registry.h"

namespace braid {

BRAID_OPERATOR_SCHEMA(Add)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}, {1, 0}})
    .TensorInference(InferElementwiseShape)
    .SetDoc("C = A + B, elementwise; broadcast=1 repeats B over A from `axis`.");

BRAID_REGISTER_CPU_OPERATOR(Add, AddOp);

}  // namespace braid
