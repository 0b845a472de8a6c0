#include "ops/activation/unary_elementwise_op.h"

namespace braid {

std::vector<ShapeInfo> InferUnaryShape(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  if (in.empty()) return {};  // reported by OpSchema::Verify
  if (in[0].dtype != DType::kFloat32) {
    ThrowInvalidArgument("input " + DescribeBlob(def.input(0), in[0]) + " must be float32");
  }
  return {in[0]};
}

std::vector<ShapeInfo> InferOutputGradientShape(const OperatorDef& def,
                                                const std::vector<ShapeInfo>& in) {
  if (in.size() != 2) return {};  // reported by OpSchema::Verify
  CheckSameTypeAndShape(def, in, 1);
  return InferUnaryShape(def, in);
}

GradientOps OutputBasedGradient(const GradientRequest& request, const std::string& gradient_type) {
  const OperatorDef& op = request.op;
  return {{MakeGradientOp(op, gradient_type, {op.output(0), request.output_grads[0]},
                          {request.input_grads[0]})},
          {true}};
}

}  // namespace braid
