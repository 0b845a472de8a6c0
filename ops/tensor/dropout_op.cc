#include "ops/tensor/dropout_op.h"

#include <algorithm>
#include <random>

#include "ops/common/op_checks.h"
#include "ops/tensor/reshape_op.h"
#include "runtime/core/argument.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

void CheckFloat(const OperatorDef& def, const std::vector<ShapeInfo>& in, int i) {
  if (in[i].dtype != DType::kFloat32) {
    ThrowInvalidArgument("input " + DescribeBlob(def.input(i), in[i]) + " must be float32");
  }
}

std::vector<ShapeInfo> InferDropoutShape(const OperatorDef& def, const std::vector<ShapeInfo>& in) {
  DropoutRatio(def);
  if (!DropoutIsTest(def) && def.output_size() < 2) {
    ThrowInvalidArgument("Dropout with is_test = 0 needs the mask output");
  }
  if (in.size() != 1) return {};  // reported by OpSchema::Verify
  CheckFloat(def, in, 0);
  return {in[0], ShapeInfo{DType::kBool, in[0].dims, true}};
}

GradientOps DropoutGradientOps(const GradientRequest& r) {
  const OperatorDef& op = r.op;
  std::vector<std::string> inputs{r.output_grads[0]};
  if (!DropoutIsTest(op)) inputs.push_back(op.output(1));
  return GradientOps{{MakeGradientOp(op, "DropoutGrad", inputs, {r.input_grads[0]})}, {true}};
}

}  // namespace

bool DropoutIsTest(const OperatorDef& def) {
  return ArgumentReader(def.arg()).Get<bool>("is_test", false);
}

float DropoutRatio(const OperatorDef& def) {
  const float ratio = ArgumentReader(def.arg()).Get<float>("ratio", 0.5f);
  if (!(ratio >= 0 && ratio <= 1)) {
    ThrowInvalidArgument("argument 'ratio' must be in [0, 1], got " + std::to_string(ratio));
  }
  return ratio;
}

float DropoutKeptScale(float ratio) { return ratio >= 1 ? 0.f : 1.f / (1.f - ratio); }

// DropoutGrad's inputs: dY, and the mask unless is_test.
std::vector<ShapeInfo> InferDropoutGradShape(const OperatorDef& def,
                                             const std::vector<ShapeInfo>& in) {
  DropoutRatio(def);
  if (in.size() != (DropoutIsTest(def) ? 1u : 2u)) {
    ThrowInvalidArgument(std::string("DropoutGrad takes (dY") +
                         (DropoutIsTest(def) ? "" : ", mask") +
                         ") with is_test = " + (DropoutIsTest(def) ? "1" : "0") + ", got " +
                         std::to_string(in.size()) + " inputs");
  }
  CheckFloat(def, in, 0);
  if (in.size() == 2 && (in[1].dtype != DType::kBool || in[1].dims != in[0].dims)) {
    ThrowInvalidArgument("mask " + DescribeBlob(def.input(1), in[1]) +
                         " must be bool with the shape of dY " + DescribeBlob(def.input(0), in[0]));
  }
  return {in[0]};
}

DropoutOp::DropoutOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws), ratio_(DropoutRatio(def)), is_test_(DropoutIsTest(def)) {
  if (!is_test_ && OutputSize() < 2) {
    ThrowInvalidArgument("Dropout with is_test = 0 needs the mask output");
  }
}

void DropoutOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  const Tensor& x = Input(0);
  InferDropoutShape(def(), InputShapeInfos(*this));
  bool* mask =
      OutputSize() == 2 ? Output(1, DType::kBool, x.shape())->mutable_data<bool>() : nullptr;
  if (is_test_) {
    CopyReshaped(x, Output(0), x.shape());
    if (mask != nullptr) std::fill_n(mask, x.numel(), true);
    return;
  }
  const float scale = DropoutKeptScale(ratio_);
  std::bernoulli_distribution keep(1.0 - ratio_);
  float* y = Output(0, DType::kFloat32, x.shape())->mutable_data<float>();
  const float* xs = x.data<float>();  // after mutable_data: Y may be X
  for (int64_t i = 0; i < x.numel(); ++i) {
    mask[i] = keep(rng());
    y[i] = mask[i] ? xs[i] * scale : 0.f;
  }
}

DropoutGradOp::DropoutGradOp(const OperatorDef& def, Workspace* ws)
    : OperatorBase(def, ws), ratio_(DropoutRatio(def)), is_test_(DropoutIsTest(def)) {}

void DropoutGradOp::Run() {
  CheckInputType(*this, 0, {DType::kFloat32});
  if (InputSize() == 2) CheckInputType(*this, 1, {DType::kBool});
  InferDropoutGradShape(def(), InputShapeInfos(*this));
  const Tensor& dy = Input(0);
  if (is_test_) {
    CopyReshaped(dy, Output(0), dy.shape());
    return;
  }
  const float scale = DropoutKeptScale(ratio_);
  float* dx = Output(0, DType::kFloat32, dy.shape())->mutable_data<float>();
  const float* dys = dy.data<float>();  // after mutable_data: dX may be dY
  const bool* mask = Input(1).data<bool>();
  for (int64_t i = 0; i < dy.numel(); ++i) dx[i] = mask[i] ? dys[i] * scale : 0.f;
}

BRAID_OPERATOR_SCHEMA(Dropout)
    .Arg("is_test", ArgKind::kInt)
    .Arg("ratio", ArgKind::kFloat)
    .NumInputs(1)
    .NumOutputs(1, 2)
    .AllowInplace({{0, 0}})
    .TensorInference(InferDropoutShape)
    .SetDoc("Y = X * mask / (1 - ratio) with a random bool mask (is_test = 0), or Y = X.");

BRAID_OPERATOR_SCHEMA(DropoutGrad)
    .ArgsOf("Dropout")
    .NumInputs(1, 2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferDropoutGradShape)
    .SetDoc("dX = dY * mask / (1 - ratio), or dX = dY with is_test = 1.");

BRAID_REGISTER_CPU_OPERATOR(Dropout, DropoutOp);
BRAID_REGISTER_CPU_OPERATOR(DropoutGrad, DropoutGradOp);
BRAID_REGISTER_GRADIENT(Dropout, DropoutGradientOps);

}  // namespace braid
