// The Caffe2 TensorProto data types braid has tensors of, both ways: how ops that take a
// `dtype`/`to` argument as a TensorProto number (ConstantFill, Cast, GivenTensorFill) and
// value_info.json's element types (runtime/io/model_folder.h) read and write them, and how DB
// records and checkpoints (runtime/io/tensor_protos_record.h) read a tensor's data_type.
//
//   DTypeOfTensorProtoType(TensorProto::FLOAT16);   // DType::kFloat16
//   TensorProtoDataType(DType::kInt64);             // TensorProto::INT64 (10)
//
// Pure; thread-safe.
#ifndef BRAID_RUNTIME_CORE_TENSOR_PROTO_DTYPE_H_
#define BRAID_RUNTIME_CORE_TENSOR_PROTO_DTYPE_H_

#include <optional>

#include "braid/dtype.h"

namespace braid {

// The numbers DTypeOfTensorProtoType accepts, for error messages.
inline constexpr char kTensorProtoDTypes[] =
    "FLOAT=1, INT32=2, BOOL=5, UINT8=6, INT64=10, FLOAT16=12, DOUBLE=13";

// FLOAT -> kFloat32, INT32, BOOL, UINT8, INT64, FLOAT16, DOUBLE -> kFloat64; nullopt for any other
// number.
std::optional<DType> DTypeOfTensorProtoType(int number);
// The number of `dtype`, which every DType has.
int TensorProtoDataType(DType dtype);

}  // namespace braid

#endif  // BRAID_RUNTIME_CORE_TENSOR_PROTO_DTYPE_H_
