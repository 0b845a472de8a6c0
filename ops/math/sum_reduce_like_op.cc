#include "ops/math/sum_reduce_like_op.h"

#include <vector>

#include "ops/common/op_checks.h"
#include "ops/math/elementwise_op.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

std::vector<ShapeInfo> InferSumReduceLikeShape(const OperatorDef& def,
                                               const std::vector<ShapeInfo>& in) {
  if (in.size() != 2) return {};  // arity is reported by OpSchema::Verify
  ElementwiseBroadcast(def, in[0], in[1]);
  return {ShapeInfo{in[0].dtype, in[1].dims, true}};
}

}  // namespace

void SumReduceLikeOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kFloat32});
  const Tensor& a = Input(0);
  const BroadcastSizes s = ElementwiseBroadcast(def(), ShapeOf(a), ShapeOf(Input(1)));
  float* c = Output(0, DType::kFloat32, Input(1).shape())->mutable_data<float>();
  ReduceOverBroadcast(s, a.data<float>(), 1.0, c);
}

BRAID_OPERATOR_SCHEMA(SumReduceLike)
    .Arg("broadcast", ArgKind::kInt)
    .Arg("axis", ArgKind::kInt)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(InferSumReduceLikeShape)
    .SetDoc("C = A summed down to B's shape (the reverse of Add's broadcast=1 from `axis`).");

BRAID_REGISTER_CPU_OPERATOR(SumReduceLike, SumReduceLikeOp);

}  // namespace braid
