#include "ops/math/copy_op.h"

#include "ops/common/op_checks.h"
#include "runtime/op_registry.h"

namespace braid {

void CopyOp::Run() {
  const Tensor& input = Input(0);
  CheckInputType(*this, 0, {input.dtype()});
  Output(0)->CopyFrom(input);
}

BRAID_OPERATOR_SCHEMA(Copy).NumInputs(1).NumOutputs(1).IdenticalTypeAndShape().SetDoc(
    "Y = X: copies type, shape and data.");

BRAID_REGISTER_CPU_OPERATOR(Copy, CopyOp);

}  // namespace braid
