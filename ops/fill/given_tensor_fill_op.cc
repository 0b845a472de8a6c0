#include "ops/fill/given_tensor_fill_op.h"

#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <glog/logging.h>

#include "ops/common/op_checks.h"
#include "runtime/core/argument.h"
#include "runtime/core/element_count.h"
#include "runtime/core/gradient.h"
#include "runtime/core/op_registry.h"

namespace braid {
namespace {

// The field of the `values` argument an op reads.
enum class ValueField { kFloats, kInts, kByteString };

struct GivenValues {
  DType dtype;
  ValueField field;
};

GivenValues GivenValuesFromDTypeArgument(const OperatorDef& def) {
  const int dtype = ArgumentReader(def.arg()).Get<int>("dtype", TensorProto::FLOAT);
  switch (dtype) {
    case TensorProto::FLOAT:
      return {DType::kFloat32, ValueField::kFloats};
    case TensorProto::DOUBLE:
      return {DType::kFloat64, ValueField::kFloats};
    case TensorProto::INT32:
      return {DType::kInt32, ValueField::kInts};
    case TensorProto::INT64:
      return {DType::kInt64, ValueField::kInts};
    case TensorProto::BOOL:
      return {DType::kBool, ValueField::kInts};
    case TensorProto::FLOAT16:  // floats, rounded to half precision
      return {DType::kFloat16, ValueField::kFloats};
  }
  ThrowInvalidArgument(def.type() + " does not support dtype " + std::to_string(dtype) +
                       " (supported: FLOAT=1, INT32=2, BOOL=5, INT64=10, FLOAT16=12, DOUBLE=13)");
}

GivenValues GivenValuesOf(const OperatorDef& def) {
  const std::string& type = def.type();
  if (type == "GivenTensorFill") return GivenValuesFromDTypeArgument(def);
  if (type == "GivenTensorDoubleFill") return {DType::kFloat64, ValueField::kFloats};
  if (type == "GivenTensorIntFill") return {DType::kInt32, ValueField::kInts};
  if (type == "GivenTensorInt64Fill") return {DType::kInt64, ValueField::kInts};
  if (type == "GivenTensorBoolFill") return {DType::kBool, ValueField::kInts};
  // Invariant: this kernel is registered for the GivenTensor*Fill types above only.
  CHECK_EQ(type, "GivenTensorByteStringToUInt8Fill") << "GivenTensorFillOp registered for " << type;
  return {DType::kUInt8, ValueField::kByteString};
}

const Argument* FindValues(const OperatorDef& def) {
  for (const Argument& arg : def.arg()) {
    if (arg.name() == "values") return &arg;
  }
  return nullptr;
}

std::string_view ByteString(const Argument& values) {
  return values.strings_size() == 1 ? std::string_view(values.strings(0))
                                    : std::string_view(values.s());
}

// Throws unless `values` holds its values in `field` and nowhere else.
void CheckValuesField(const OperatorDef& def, const Argument& values, ValueField field) {
  std::string held;
  auto note = [&held](bool present, const std::string& what) {
    if (present) held += (held.empty() ? "" : ", ") + what;
  };
  note(values.has_f(), "f");
  note(values.has_i(), "i");
  note(field != ValueField::kFloats && values.floats_size() > 0, "floats");
  note(field != ValueField::kInts && values.ints_size() > 0, "ints");
  note(field != ValueField::kByteString && (values.strings_size() > 0 || values.has_s()),
       "strings");
  note(field == ValueField::kByteString && values.strings_size() > 1,
       std::to_string(values.strings_size()) + " strings");
  note(field == ValueField::kByteString && values.strings_size() == 1 && values.has_s(),
       "both strings and s");
  if (held.empty()) return;
  const char* wanted = field == ValueField::kFloats ? "floats"
                       : field == ValueField::kInts ? "ints"
                                                    : "one string (strings with one entry, or s)";
  ThrowInvalidArgument(def.type() + " '" + def.output(0) + "' reads argument 'values' as " +
                       wanted + ", but it holds " + held);
}

// Writes values[i] converted to T into out[i] (out may be null: only checks), throwing when T
// cannot hold a value exactly (an int beyond int32, a bool other than 0 or 1).
template <typename T, typename V>
void ConvertValues(const OperatorDef& def, std::span<const V> values, T* out) {
  for (size_t i = 0; i < values.size(); ++i) {
    const T value = static_cast<T>(values[i]);
    if constexpr (std::is_integral_v<V>) {
      if (static_cast<V>(value) != values[i]) {
        ThrowInvalidArgument(def.type() + " '" + def.output(0) + "': value #" +
                             std::to_string(i) + " of 'values' (" + std::to_string(values[i]) +
                             ") does not fit " + DTypeName(DTypeOf<T>()));
      }
    }
    if (out != nullptr) out[i] = value;
  }
}

template <typename T>
void ConvertField(const OperatorDef& def, ValueField field, T* out) {
  const Argument* values = FindValues(def);
  if (values == nullptr) return;
  switch (field) {
    case ValueField::kFloats:
      return ConvertValues<T, float>(
          def, {values->floats().data(), static_cast<size_t>(values->floats_size())}, out);
    case ValueField::kInts:
      return ConvertValues<T, int64_t>(
          def, {values->ints().data(), static_cast<size_t>(values->ints_size())}, out);
    case ValueField::kByteString: {
      const std::string_view bytes = ByteString(*values);
      return ConvertValues<T, uint8_t>(
          def, {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, out);
    }
  }
}

template <typename T>
T* DataOrNull(Tensor* t) {
  return t == nullptr ? nullptr : t->mutable_data<T>();
}

// Converts the values into `out` (of the op's type and shape), or only checks them if it is null.
void ConvertGivenValues(const OperatorDef& def, Tensor* out) {
  const GivenValues given = GivenValuesOf(def);
  switch (given.dtype) {
    case DType::kFloat32:
      return ConvertField(def, given.field, DataOrNull<float>(out));
    case DType::kFloat64:
      return ConvertField(def, given.field, DataOrNull<double>(out));
    case DType::kInt32:
      return ConvertField(def, given.field, DataOrNull<int32_t>(out));
    case DType::kInt64:
      return ConvertField(def, given.field, DataOrNull<int64_t>(out));
    case DType::kUInt8:
      return ConvertField(def, given.field, DataOrNull<uint8_t>(out));
    case DType::kBool:
      return ConvertField(def, given.field, DataOrNull<bool>(out));
    case DType::kFloat16:
      return ConvertField(def, given.field, DataOrNull<Float16>(out));
  }
}

std::vector<ShapeInfo> InferGivenTensorFill(const OperatorDef& def,
                                            const std::vector<ShapeInfo>& in) {
  std::vector<ShapeInfo> out = InferFillShape(def, in, GivenTensorFillDType(def));
  if (out[0].known) CheckGivenValueCount(def, GivenTensorFillValueCount(def), out[0].dims);
  return out;
}

}  // namespace

DType GivenTensorFillDType(const OperatorDef& def) { return GivenValuesOf(def).dtype; }

int64_t GivenTensorFillValueCount(const OperatorDef& def) {
  const Argument* values = FindValues(def);
  if (values == nullptr) return 0;
  const ValueField field = GivenValuesOf(def).field;
  CheckValuesField(def, *values, field);
  switch (field) {
    case ValueField::kFloats:
      return values->floats_size();
    case ValueField::kInts:
      return values->ints_size();
    case ValueField::kByteString:
      return static_cast<int64_t>(ByteString(*values).size());
  }
  return 0;
}

void CheckGivenValueCount(const OperatorDef& def, int64_t value_count,
                          const std::vector<int64_t>& dims) {
  const int64_t elements = ElementCount(dims);
  if (elements == value_count) return;
  ThrowInvalidArgument(def.type() + " '" + def.output(0) + "': argument 'values' holds " +
                       std::to_string(value_count) + " values, but the output shape " +
                       DimsText(dims) + " holds " + std::to_string(elements) + " elements");
}

GivenTensorFillOp::GivenTensorFillOp(const OperatorDef& def, Workspace* ws)
    : FillOp(def, ws, GivenTensorFillDType(def)), value_count_(GivenTensorFillValueCount(def)) {
  ConvertGivenValues(def, nullptr);
  if (InputSize() == 0) CheckGivenValueCount(def, value_count_, FillShape(def, nullptr));
}

void GivenTensorFillOp::Fill(Tensor* output) {
  CheckGivenValueCount(def(), value_count_, output->shape());
  ConvertGivenValues(def(), output);
}

BRAID_OPERATOR_SCHEMA(GivenTensorFill)
    .Args(FillShapeArgs())
    // The field follows dtype; strings are Caffe2's dtype STRING, which the op refuses by name.
    .Arg("values", ArgKind::kFloats | ArgKind::kInts | ArgKind::kStrings)
    .Arg("dtype", ArgKind::kInt)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferGivenTensorFill)
    .SetDoc("Output = `values` (floats) in `shape`; `dtype` FLOAT/DOUBLE/INT32/INT64/BOOL.");
BRAID_OPERATOR_SCHEMA(GivenTensorDoubleFill)
    .Args(FillShapeArgs())
    .Arg("values", ArgKind::kFloats)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferGivenTensorFill)
    .SetDoc("Output = `values` (floats) as float64 in `shape`.");
BRAID_OPERATOR_SCHEMA(GivenTensorIntFill)
    .Args(FillShapeArgs())
    .Arg("values", ArgKind::kInts)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferGivenTensorFill)
    .SetDoc("Output = `values` (ints) as int32 in `shape`.");
BRAID_OPERATOR_SCHEMA(GivenTensorInt64Fill)
    .Args(FillShapeArgs())
    .Arg("values", ArgKind::kInts)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferGivenTensorFill)
    .SetDoc("Output = `values` (ints) as int64 in `shape`.");
BRAID_OPERATOR_SCHEMA(GivenTensorBoolFill)
    .Args(FillShapeArgs())
    .Arg("values", ArgKind::kInts)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferGivenTensorFill)
    .SetDoc("Output = `values` (ints, each 0 or 1) as bool in `shape`.");
BRAID_OPERATOR_SCHEMA(GivenTensorByteStringToUInt8Fill)
    .Args(FillShapeArgs())
    .Arg("values", ArgKind::kStrings | ArgKind::kString)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .TensorInference(InferGivenTensorFill)
    .SetDoc("Output = the bytes of `values` (one string) as uint8 in `shape`.");

BRAID_REGISTER_CPU_OPERATOR(GivenTensorFill, GivenTensorFillOp);
BRAID_REGISTER_CPU_OPERATOR(GivenTensorDoubleFill, GivenTensorFillOp);
BRAID_REGISTER_CPU_OPERATOR(GivenTensorIntFill, GivenTensorFillOp);
BRAID_REGISTER_CPU_OPERATOR(GivenTensorInt64Fill, GivenTensorFillOp);
BRAID_REGISTER_CPU_OPERATOR(GivenTensorBoolFill, GivenTensorFillOp);
BRAID_REGISTER_CPU_OPERATOR(GivenTensorByteStringToUInt8Fill, GivenTensorFillOp);
BRAID_NO_GRADIENT(GivenTensorFill);
BRAID_NO_GRADIENT(GivenTensorDoubleFill);
BRAID_NO_GRADIENT(GivenTensorIntFill);
BRAID_NO_GRADIENT(GivenTensorInt64Fill);
BRAID_NO_GRADIENT(GivenTensorBoolFill);
BRAID_NO_GRADIENT(GivenTensorByteStringToUInt8Fill);

}  // namespace braid
