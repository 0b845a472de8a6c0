#include "ops/fill/constant_fill_op.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"
#include "runtime/core/op_registry.h"
#include "runtime/core/tensor_proto_dtype.h"

namespace braid {
namespace {

const Argument* FindArgument(const OperatorDef& def, const std::string& name) {
  for (const Argument& arg : def.arg()) {
    if (arg.name() == name) return &arg;
  }
  return nullptr;
}

// The range of an integer output type; none for the float types and bool.
std::optional<std::pair<double, double>> IntegerRange(DType dtype) {
  switch (dtype) {
    case DType::kInt32:
      return std::pair{-2147483648.0, 2147483647.0};
    case DType::kInt64:  // 2^63 itself does not fit
      return std::pair{-9223372036854775808.0, 9223372036854775807.0};
    case DType::kUInt8:
      return std::pair{0.0, 255.0};
    default:
      return std::nullopt;
  }
}

// Refuses a value the integer output type cannot hold (as Caffe2 refuses a lossy conversion),
// before any cast: a float outside int64's range does not convert at all.
void CheckFitsIntegerType(double value, DType dtype, const std::string& text) {
  const auto range = IntegerRange(dtype);
  if (!range) return;
  const auto [low, high] = *range;
  // high + 1 is exact where high is not (int64's 2^63 - 1 rounds to 2^63 as a double).
  if (!(value >= low && value < high + 1.0)) {
    ThrowInvalidArgument("argument 'value' " + text + " does not fit the output type " +
                         DTypeName(dtype));
  }
}

template <typename T>
void FillWith(Tensor* output, T value) {
  std::fill_n(output->mutable_data<T>(), output->numel(), value);
}

}  // namespace

DType ConstantFillDType(const OperatorDef& def) {
  const Argument* value = FindArgument(def, "value");
  int fallback = value != nullptr && value->has_i() ? TensorProto::INT64 : TensorProto::FLOAT;
  int dtype = ArgumentReader(def.arg()).Get<int>("dtype", fallback);
  const std::optional<DType> type = DTypeOfTensorProtoType(dtype);
  if (!type) {
    ThrowInvalidArgument("ConstantFill does not support dtype " + std::to_string(dtype) +
                         " (supported: " + kTensorProtoDTypes + ")");
  }
  return *type;
}

ConstantFillOp::ConstantFillOp(const OperatorDef& def, Workspace* ws)
    : FillOp(def, ws, ConstantFillDType(def)) {
  const Argument* value = FindArgument(def, "value");
  if (value == nullptr) return;
  const DType dtype = ConstantFillDType(def);
  if (value->has_i()) {
    if (dtype != DType::kInt64) {
      CheckFitsIntegerType(static_cast<double>(value->i()), dtype, std::to_string(value->i()));
    }
    int_value_ = value->i();
    float_value_ = static_cast<double>(value->i());
  } else if (value->has_f()) {
    CheckFitsIntegerType(value->f(), dtype, std::to_string(value->f()));
    float_value_ = value->f();
    int_value_ = IntegerRange(dtype) ? static_cast<int64_t>(value->f()) : 0;
  } else {
    ThrowInvalidArgument("argument 'value' must be a number (f or i)");
  }
}

void ConstantFillOp::Fill(Tensor* output) {
  switch (output->dtype()) {
    case DType::kFloat32:
      return FillWith(output, static_cast<float>(float_value_));
    case DType::kFloat64:
      return FillWith(output, float_value_);
    case DType::kInt32:
      return FillWith(output, static_cast<int32_t>(int_value_));
    case DType::kInt64:
      return FillWith(output, int_value_);
    case DType::kUInt8:
      return FillWith(output, static_cast<uint8_t>(int_value_));
    case DType::kBool:
      return FillWith(output, int_value_ != 0 || float_value_ != 0);
    case DType::kFloat16:
      return FillWith(output, Float16(static_cast<float>(float_value_)));
  }
}

BRAID_OPERATOR_SCHEMA(ConstantFill)
    .Args(FillShapeArgs())
    .Arg("value", ArgKind::kFloat)
    .Arg("dtype", ArgKind::kInt)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference([](const OperatorDef& def, const std::vector<ShapeInfo>& in) {
      return InferFillShape(def, in, ConstantFillDType(def));
    })
    .SetDoc("Fills the output with `value`; shape from `shape`, the input, or its contents.");

BRAID_REGISTER_CPU_OPERATOR(ConstantFill, ConstantFillOp);

}  // namespace braid
