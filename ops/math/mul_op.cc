#include "ops/math/mul_op.h"

#include <vector>

#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

std::vector<ShapeInfo> InferMulGradientShape(const OperatorDef& def,
                                             const std::vector<ShapeInfo>& in) {
  if (in.size() != 3) return {};  // arity is reported by OpSchema::Verify
  ElementwiseBroadcast(def, in[0], in[1]);
  if (in[2].dtype != in[0].dtype || in[2].dims != in[0].dims) {
    ThrowInvalidArgument("dC " + DescribeBlob(def.input(2), in[2]) + " must have A " +
                         DescribeBlob(def.input(0), in[0]) + "'s type and shape");
  }
  return {in[0], in[1]};
}

GradientOps MulGradient(const GradientRequest& r) {
  if (r.output_grads[0].empty()) return {{}, {false, false}};
  for (const std::string& in : r.op.input()) {
    if (in == r.op.output(0)) {
      ThrowInvalidArgument("Mul writes C in place of its input '" + in +
                           "', which its gradient needs; write C to a new blob");
    }
  }
  return {{MakeGradientOp(r.op, "MulGradient", {r.op.input(0), r.op.input(1), r.output_grads[0]},
                          {r.input_grads[0], r.input_grads[1]})},
          {true, true}};
}

}  // namespace

void MulGradientOp::Run() {
  for (int i = 0; i < 3; ++i) CheckInputType(*this, i, {DType::kFloat32});
  InferMulGradientShape(def(), InputShapeInfos(*this));
  const Tensor& a = Input(0);
  const Tensor& b = Input(1);
  const BroadcastSizes s = ElementwiseBroadcast(def(), ShapeOf(a), ShapeOf(b));
  float* da = Output(0, DType::kFloat32, a.shape())->mutable_data<float>();
  float* db = Output(1, DType::kFloat32, b.shape())->mutable_data<float>();
  const float* as = a.data<float>();
  const float* bs = b.data<float>();
  const float* dc = Input(2).data<float>();
  std::vector<double> db_sums(s.inner_b, 0.0);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t j = 0; j < s.inner_b; ++j) {
      const int64_t row = (o * s.inner_b + j) * s.inner;
      double sum = 0;
      for (int64_t p = 0; p < s.inner; ++p) {
        da[row + p] = dc[row + p] * bs[j];
        sum += static_cast<double>(dc[row + p]) * as[row + p];
      }
      db_sums[j] += sum;
    }
  }
  for (int64_t j = 0; j < s.inner_b; ++j) db[j] = static_cast<float>(db_sums[j]);
}

BRAID_OPERATOR_SCHEMA(Mul)
    .Arg("broadcast", ArgKind::kInt)
    .Arg("axis", ArgKind::kInt)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}, {1, 0}})
    .TensorInference(InferElementwiseShape)
    .SetDoc("C = A * B, elementwise; broadcast=1 repeats B over A from `axis`.");

BRAID_OPERATOR_SCHEMA(MulGradient)
    .ArgsOf("Mul")
    .NumInputs(3)
    .NumOutputs(2)
    .TensorInference(InferMulGradientShape)
    .SetDoc("Mul's gradient: inputs A, B, dC; outputs dA = dC * B, dB = dC * A summed to B.");

BRAID_REGISTER_CPU_OPERATOR(Mul, MulOp);
BRAID_REGISTER_CPU_OPERATOR(MulGradient, MulGradientOp);
BRAID_REGISTER_GRADIENT(Mul, MulGradient);

}  // namespace braid
