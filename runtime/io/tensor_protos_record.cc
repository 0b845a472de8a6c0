#include "runtime/io/tensor_protos_record.h"

#include <cstring>
#include <optional>
#include <type_traits>

#include "braid/status.h"
#include "runtime/core/dims_text.h"
#include "runtime/core/element_count.h"
#include "runtime/core/tensor_proto_dtype.h"
#include "runtime/io/db.h"

namespace braid {
namespace {

[[noreturn]] void ThrowInvalid(const std::string& where, const std::string& message) {
  throw Error(Status::InvalidArgument(where + ": " + message));
}

void CheckCount(int64_t have, const RecordTensor& t, const char* field, const std::string& where) {
  if (have != t.numel()) {
    ThrowInvalid(where, "tensor " + t.ToString() + " holds " + std::to_string(have) +
                            " values in " + field + ", not " + std::to_string(t.numel()));
  }
}

// Values stored in a field of their own type: one copy.
template <typename T, typename Field>
void CopySame(const Field& field, const RecordTensor& t, const RecordDestination& out,
              const char* name, const std::string& where) {
  CheckCount(field.size(), t, name, where);
  uint8_t* to = out();
  if (field.size() > 0) std::memcpy(to, field.data(), static_cast<size_t>(t.bytes()));
}

// uint8 and bool values that Caffe2 stores widened to int32, and float16 values' bits.
template <typename T>
void CopyNarrowed(const google::protobuf::RepeatedField<int32_t>& field, const RecordTensor& t,
                  const RecordDestination& out, const std::string& where) {
  CheckCount(field.size(), t, "int32_data", where);
  constexpr int32_t kMax = std::is_same_v<T, bool> ? 1 : std::is_same_v<T, Float16> ? 0xffff : 255;
  for (int i = 0; i < field.size(); ++i) {  // every value checked before `out` is asked for
    const int32_t v = field.Get(i);
    if (v < 0 || v > kMax) {
      ThrowInvalid(where, "value " + std::to_string(v) + " at " + std::to_string(i) +
                              " does not fit " + DTypeName(t.dtype));
    }
  }
  T* values = reinterpret_cast<T*>(out());
  for (int i = 0; i < field.size(); ++i) {
    if constexpr (std::is_same_v<T, Float16>) {
      values[i] = Float16::FromBits(static_cast<uint16_t>(field.Get(i)));
    } else {
      values[i] = static_cast<T>(field.Get(i));
    }
  }
}

void CopyBytes(const std::string& bytes, const RecordTensor& t, const RecordDestination& out,
               const char* name, const std::string& where) {
  if (static_cast<int64_t>(bytes.size()) != t.bytes()) {
    ThrowInvalid(where, "tensor " + t.ToString() + " holds " + std::to_string(bytes.size()) +
                            " bytes in " + name + ", not " + std::to_string(t.bytes()));
  }
  if (t.dtype == DType::kBool) {  // a bool's byte is 0 or 1; any other is no bool at all
    for (size_t i = 0; i < bytes.size(); ++i) {
      if (static_cast<uint8_t>(bytes[i]) > 1) {
        ThrowInvalid(where, "byte " + std::to_string(static_cast<uint8_t>(bytes[i])) + " at " +
                                std::to_string(i) + " in " + name + " is not a bool (0 or 1)");
      }
    }
  }
  uint8_t* to = out();
  if (!bytes.empty()) std::memcpy(to, bytes.data(), bytes.size());
}

}  // namespace

int64_t RecordTensor::numel() const { return ElementCount(dims); }

std::string RecordTensor::ToString() const { return DTypeName(dtype) + DimsText(dims); }

RecordTensor RecordTensorOf(const TensorProto& proto, const std::string& where) {
  RecordTensor t;
  t.dims.assign(proto.dims().begin(), proto.dims().end());
  // Caffe2's BYTE (uint8 images, make_mnist_db) besides the types braid has tensors of.
  const std::optional<DType> dtype = proto.data_type() == TensorProto::BYTE
                                         ? std::optional<DType>(DType::kUInt8)
                                         : DTypeOfTensorProtoType(proto.data_type());
  if (!dtype.has_value()) {
    ThrowInvalid(where, "data_type " + std::to_string(proto.data_type()) + " (" +
                            TensorProto::DataType_Name(proto.data_type()) +
                            ") is not one braid reads (FLOAT, DOUBLE, INT32, INT64, BYTE, " +
                            "UINT8, BOOL, FLOAT16)");
  }
  t.dtype = *dtype;
  try {
    ElementCount(t.dims, t.dtype);
  } catch (const Error& e) {
    ThrowInvalid(where, e.status().message());
  }
  return t;
}

void CopyRecordValues(const TensorProto& proto, const RecordTensor& t, uint8_t* out,
                      const std::string& where) {
  CopyRecordValues(
      proto, t, [out] { return out; }, where);
}

void CopyRecordValues(const TensorProto& proto, const RecordTensor& t, const RecordDestination& out,
                      const std::string& where) {
  if (proto.has_raw_data()) return CopyBytes(proto.raw_data(), t, out, "raw_data", where);
  switch (t.dtype) {
    case DType::kFloat32: return CopySame<float>(proto.float_data(), t, out, "float_data", where);
    case DType::kFloat64:
      return CopySame<double>(proto.double_data(), t, out, "double_data", where);
    case DType::kInt32: return CopySame<int32_t>(proto.int32_data(), t, out, "int32_data", where);
    case DType::kInt64: return CopySame<int64_t>(proto.int64_data(), t, out, "int64_data", where);
    case DType::kUInt8:
      if (proto.data_type() == TensorProto::BYTE || proto.has_byte_data()) {
        return CopyBytes(proto.byte_data(), t, out, "byte_data", where);
      }
      return CopyNarrowed<uint8_t>(proto.int32_data(), t, out, where);
    case DType::kBool: return CopyNarrowed<bool>(proto.int32_data(), t, out, where);
    case DType::kFloat16:
      if (proto.has_byte_data()) return CopyBytes(proto.byte_data(), t, out, "byte_data", where);
      return CopyNarrowed<Float16>(proto.int32_data(), t, out, where);
  }
}

void ParseRecord(std::string_view value, const std::string& where, TensorProtos* record) {
  if (value.size() > static_cast<size_t>(INT32_MAX) ||
      !record->ParseFromArray(value.data(), static_cast<int>(value.size()))) {
    ThrowInvalid(where, "the value (" + std::to_string(value.size()) +
                            " bytes) is not a serialized TensorProtos");
  }
}

TensorProtosDbLayout DescribeTensorProtosDb(const std::string& type, const std::string& path) {
  std::unique_ptr<Db> db = OpenDb(type, path, DbMode::kRead);
  TensorProtosDbLayout layout;
  layout.count = db->Count();
  std::unique_ptr<DbCursor> cursor = db->NewCursor();
  cursor->SeekToFirst();
  if (!cursor->Valid()) {
    throw Error(Status::InvalidArgument(db->Name() + " holds no records"));
  }
  const std::string where = db->Name() + " record '" + std::string(cursor->key()) + "'";
  TensorProtos record;
  ParseRecord(cursor->value(), where, &record);
  if (record.protos_size() == 0) ThrowInvalid(where, "the record holds no tensors");
  for (int i = 0; i < record.protos_size(); ++i) {
    layout.tensors.push_back(
        RecordTensorOf(record.protos(i), where + " tensor " + std::to_string(i)));
  }
  return layout;
}

}  // namespace braid
