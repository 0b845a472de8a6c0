#include "runtime/core/tensor_proto_dtype.h"

#include "proto/braid.pb.h"

namespace braid {

std::optional<DType> DTypeOfTensorProtoType(int number) {
  switch (number) {
    case TensorProto::FLOAT:
      return DType::kFloat32;
    case TensorProto::INT32:
      return DType::kInt32;
    case TensorProto::BOOL:
      return DType::kBool;
    case TensorProto::UINT8:
      return DType::kUInt8;
    case TensorProto::INT64:
      return DType::kInt64;
    case TensorProto::DOUBLE:
      return DType::kFloat64;
    case TensorProto::FLOAT16:
      return DType::kFloat16;
  }
  return std::nullopt;
}

int TensorProtoDataType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return TensorProto::FLOAT;
    case DType::kFloat64:
      return TensorProto::DOUBLE;
    case DType::kInt32:
      return TensorProto::INT32;
    case DType::kInt64:
      return TensorProto::INT64;
    case DType::kUInt8:
      return TensorProto::UINT8;
    case DType::kBool:
      return TensorProto::BOOL;
    case DType::kFloat16:
      return TensorProto::FLOAT16;
  }
  return TensorProto::UNDEFINED;
}

}  // namespace braid
