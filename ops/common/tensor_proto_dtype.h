// The Caffe2 TensorProto data types braid has tensors of: how ops that take a `dtype`/`to`
// argument as a TensorProto number (ConstantFill, Cast, GivenTensorFill) read it.
#ifndef BRAID_OPS_COMMON_TENSOR_PROTO_DTYPE_H_
#define BRAID_OPS_COMMON_TENSOR_PROTO_DTYPE_H_

#include <optional>

#include "braid/dtype.h"

namespace braid {

// The numbers DTypeOfTensorProtoType accepts, for error messages.
inline constexpr char kTensorProtoDTypes[] =
    "FLOAT=1, INT32=2, BOOL=5, UINT8=6, INT64=10, DOUBLE=13";

// FLOAT -> kFloat32, INT32, BOOL, UINT8, INT64, DOUBLE -> kFloat64; nullopt for any other number.
std::optional<DType> DTypeOfTensorProtoType(int number);

}  // namespace braid

#endif  // BRAID_OPS_COMMON_TENSOR_PROTO_DTYPE_H_
