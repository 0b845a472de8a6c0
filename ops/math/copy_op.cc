#include "ops/math/copy_op.h"

#include "ops/common/op_checks.h"
#include "runtime/gradient.h"
#include "runtime/op_registry.h"

namespace braid {
namespace {

GradientOps CopyGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false}};
  return {{MakeGradientOp(r.op, "Copy", {r.output_grads[0]}, {r.input_grads[0]})}, {true}};
}

}  // namespace

void CopyOp::Run() {
  const Tensor& input = Input(0);
  CheckInputType(*this, 0, {input.dtype()});
  Output(0)->CopyFrom(input);
}

BRAID_OPERATOR_SCHEMA(Copy).NumInputs(1).NumOutputs(1).IdenticalTypeAndShape().SetDoc(
    "Y = X: copies type, shape and data.");

BRAID_REGISTER_CPU_OPERATOR(Copy, CopyOp);
BRAID_REGISTER_GRADIENT(Copy, CopyGradient);

}  // namespace braid
