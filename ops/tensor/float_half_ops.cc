#include "ops/tensor/float_half_ops.h"

#include "ops/common/op_checks.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/op_schema.h"
#include "runtime/core/shape_inference.h"

namespace braid {
namespace {

template <typename From, typename To>
void ConvertInput0(OperatorBase* op) {
  CheckInputType(*op, 0, {DTypeOf<From>()});
  const Tensor& x = op->Input(0);
  const From* in = x.data<From>();
  To* out = op->Output(0, DTypeOf<To>(), x.shape())->template mutable_data<To>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = static_cast<To>(in[i]);
}

// Y has X's shape, in dtype `to`, once X is `from`.
OpSchema::ShapeFunction ConvertedShape(DType from, DType to) {
  return [from, to](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
    if (in.size() != 1) return std::vector<ShapeInfo>{};  // reported by OpSchema::Verify
    if (in[0].known && in[0].dtype != from) {
      ThrowInvalidArgument("input " + DescribeBlob(def.input(0), in[0]) + " must be " +
                           DTypeName(from));
    }
    return std::vector<ShapeInfo>{ShapeInfo{to, in[0].dims, in[0].known}};
  };
}

GradientMaker ConversionGradient(const char* back) {
  return [back](const GradientRequest& r) -> GradientOps {
    if (r.output_grads[0].empty()) return {{}, {false}};
    return {{MakeGradientOp(r.op, back, {r.output_grads[0]}, {r.input_grads[0]})}, {true}};
  };
}

}  // namespace

void FloatToHalfOp::Run() { ConvertInput0<float, Float16>(this); }
void HalfToFloatOp::Run() { ConvertInput0<Float16, float>(this); }

BRAID_OPERATOR_SCHEMA(FloatToHalf)
    .NoArgs()
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(ConvertedShape(DType::kFloat32, DType::kFloat16))
    .SetDoc("Y = X (float32) rounded to float16, nearest even.");
BRAID_OPERATOR_SCHEMA(HalfToFloat)
    .NoArgs()
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(ConvertedShape(DType::kFloat16, DType::kFloat32))
    .SetDoc("Y = X (float16) as float32, exactly.");

BRAID_REGISTER_CPU_OPERATOR(FloatToHalf, FloatToHalfOp);
BRAID_REGISTER_CPU_OPERATOR(HalfToFloat, HalfToFloatOp);
BRAID_REGISTER_GRADIENT(FloatToHalf, ConversionGradient("HalfToFloat"));
BRAID_REGISTER_GRADIENT(HalfToFloat, ConversionGradient("FloatToHalf"));

}  // namespace braid
