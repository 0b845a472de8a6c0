#include "ops/math/relu_op.h"

#include <algorithm>

#include "ops/common/op_checks.h"
#include "runtime/op_registry.h"

namespace braid {

void ReluOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  const Tensor& x = Input(0);
  float* y = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
  const float* xs = x.data<float>();  // after mutable_data: Y may be X
  for (int64_t i = 0; i < x.numel(); ++i) y[i] = std::max(xs[i], 0.f);
}

BRAID_OPERATOR_SCHEMA(Relu)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalTypeAndShape()
    .SetDoc("Y = max(X, 0), elementwise.");

BRAID_REGISTER_CPU_OPERATOR(Relu, ReluOp);

}  // namespace braid
