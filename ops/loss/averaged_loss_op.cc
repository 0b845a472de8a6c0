#include "ops/loss/averaged_loss_op.h"

#include <algorithm>

#include "ops/common/op_checks.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

std::vector<ShapeInfo> InferAveragedLossShape(const OperatorDef& def,
                                              const std::vector<ShapeInfo>& in) {
  if (in.size() != 1) return {};  // reported by OpSchema::Verify
  if (in[0].dtype != DType::kFloat32) {
    ThrowInvalidArgument("input " + DescribeBlob(def.input(0), in[0]) + " must be float32");
  }
  return {ShapeInfo{DType::kFloat32, {}, true}};
}

}  // namespace

std::vector<ShapeInfo> InferAveragedLossGradientShape(const OperatorDef& def,
                                                      const std::vector<ShapeInfo>& in) {
  if (in.size() != 2) return {};  // reported by OpSchema::Verify
  InferAveragedLossShape(def, {in[0]});
  if (in[1].dtype != DType::kFloat32 || in[1].numel() != 1) {
    ThrowInvalidArgument("dY " + DescribeBlob(def.input(1), in[1]) +
                         " must be a float32 scalar (one element)");
  }
  return {in[0]};
}

namespace {

GradientOps AveragedLossGradientOps(const GradientRequest& r) {
  const OperatorDef& op = r.op;
  return GradientOps{{MakeGradientOp(op, "AveragedLossGradient", {op.input(0), r.output_grads[0]},
                                     {r.input_grads[0]})},
                     {true}};
}

}  // namespace

void AveragedLossOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  const Tensor& x = Input(0);
  const float* xs = x.data<float>();
  double sum = 0;
  for (int64_t i = 0; i < x.numel(); ++i) sum += xs[i];
  const float mean = x.numel() > 0 ? static_cast<float>(sum / static_cast<double>(x.numel())) : 0;
  *Output(0, DType::kFloat32, {})->mutable_data<float>() = mean;
}

void AveragedLossGradientOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  CheckInputType(*this, 1, {DType::kFloat32});
  InferAveragedLossGradientShape(def(), InputShapeInfos(*this));
  const Tensor& x = Input(0);
  const float value = x.numel() > 0 ? Input(1).data<float>()[0] / static_cast<float>(x.numel()) : 0;
  float* dx = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
  std::fill_n(dx, x.numel(), value);
}

BRAID_OPERATOR_SCHEMA(AveragedLoss)
    .NoArgs()
    .NumInputs(1)
    .NumOutputs(1)
    .TensorInference(InferAveragedLossShape)
    .SetDoc("Y = mean(X) over all elements, a float32 scalar.");

BRAID_OPERATOR_SCHEMA(AveragedLossGradient)
    .ArgsOf("AveragedLoss")
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(InferAveragedLossGradientShape)
    .SetDoc("dX = dY / numel(X) everywhere, with X's shape.");

BRAID_REGISTER_CPU_OPERATOR(AveragedLoss, AveragedLossOp);
BRAID_REGISTER_CPU_OPERATOR(AveragedLossGradient, AveragedLossGradientOp);
BRAID_REGISTER_GRADIENT(AveragedLoss, AveragedLossGradientOps);

}  // namespace braid
