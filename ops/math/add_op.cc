#include "ops/math/add_op.h"

#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

OperatorDef CopyGradientOp(const GradientRequest& r, const std::string& dc,
                           const std::string& out) {
  OperatorDef copy = MakeGradientOp(r.op, "Copy", {dc}, {out});
  copy.clear_arg();  // Copy takes none of Add's arguments
  return copy;
}

// dA = dC; dB = dC, or dC summed down to B's shape when B is broadcast.
GradientOps AddGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false, false}};
  const std::string& dc = r.output_grads[0];
  GradientOps grad{{CopyGradientOp(r, dc, r.input_grads[0])}, {true, true}};
  if (ArgumentReader(r.op.arg()).Get<bool>("broadcast", false)) {
    grad.ops.push_back(
        MakeGradientOp(r.op, "SumReduceLike", {dc, r.op.input(1)}, {r.input_grads[1]}));
  } else {
    grad.ops.push_back(CopyGradientOp(r, dc, r.input_grads[1]));
  }
  return grad;
}

}  // namespace

BRAID_OPERATOR_SCHEMA(Add)
    .Arg("broadcast", ArgKind::kInt)
    .Arg("axis", ArgKind::kInt)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}, {1, 0}})
    .TensorInference(InferElementwiseShape)
    .SetDoc("C = A + B, elementwise; broadcast=1 repeats B over A from `axis`.");

BRAID_REGISTER_CPU_OPERATOR(Add, AddOp);
BRAID_REGISTER_GRADIENT(Add, AddGradient);

}  // namespace braid
