// Cast: Y = X converted to the type `to` (Caffe2's Cast), elementwise, any dtype to any dtype.
//
// `to` is Caffe2's TensorProto.DataType, as its number (FLOAT=1, INT32=2, BOOL=5, UINT8=6,
// INT64=10, FLOAT16=12, DOUBLE=13) or its name in any case ("float", "INT64"); other types are
// refused. An optional `from_type` (same forms) states X's type: it is checked, and the gradient
// needs it. Conversions follow C++: floats to integers truncate toward zero (a NaN or a value
// outside the target's range is refused, naming the element), integers narrow modulo 2^bits,
// anything nonzero becomes true, bools become 0 or 1; to float16 rounds to nearest even (beyond
// 65504: infinity, include/braid/dtype.h). Y is a new blob.
//
// Gradient (Caffe2's): Cast(dY) with to = `from_type`, from_type = `to`; building it without
// `from_type` throws.
//
//   X int32 [1, -2], to = 1            -> Y float32 [1, -2]
//   X float32 [2.7, -2.7], to = "INT32" -> Y int32 [2, -2]
#ifndef BRAID_OPS_TENSOR_CAST_OP_H_
#define BRAID_OPS_TENSOR_CAST_OP_H_

#include <optional>
#include <string>

#include "braid/dtype.h"
#include "runtime/core/operator.h"

namespace braid {

// The dtype the type argument `name` of `def` names (number or name), nullopt when absent; throws
// braid::Error when it names no dtype braid has.
std::optional<DType> CastTypeArgument(const OperatorDef& def, const std::string& name);

class CastOp final : public OperatorBase {
 public:
  using OperatorBase::OperatorBase;
  void Run() override;
};

}  // namespace braid

#endif  // BRAID_OPS_TENSOR_CAST_OP_H_
