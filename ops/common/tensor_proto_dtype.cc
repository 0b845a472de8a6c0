#include "ops/common/tensor_proto_dtype.h"

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
  }
  return std::nullopt;
}

}  // namespace braid
