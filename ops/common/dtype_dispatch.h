// DispatchArithmetic: calls a generic kernel with the C++ type of a tensor's dtype.
//
// For ops that compute on float32, int32 and int64 (Add, Mul, Sum, ...). Callers check the dtype
// first (CheckInputType in ops/common/op_checks.h); any other dtype runs as float.
// DispatchAnyDType covers every dtype (include/braid/dtype.h), for ops on any type (Cast).
//
//   DispatchArithmetic(Input(0).dtype(), [this](auto zero) { RunTyped<decltype(zero)>(); });
#ifndef BRAID_OPS_COMMON_DTYPE_DISPATCH_H_
#define BRAID_OPS_COMMON_DTYPE_DISPATCH_H_

#include <cstdint>

#include "braid/dtype.h"

namespace braid {

template <typename Fn>
void DispatchArithmetic(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kInt32:
      return fn(int32_t{});
    case DType::kInt64:
      return fn(int64_t{});
    default:
      return fn(float{});
  }
}

template <typename Fn>
void DispatchAnyDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32:
      return fn(float{});
    case DType::kFloat64:
      return fn(double{});
    case DType::kInt32:
      return fn(int32_t{});
    case DType::kInt64:
      return fn(int64_t{});
    case DType::kUInt8:
      return fn(uint8_t{});
    case DType::kBool:
      return fn(bool{});
    case DType::kFloat16:
      return fn(Float16{});
  }
}

}  // namespace braid

#endif  // BRAID_OPS_COMMON_DTYPE_DISPATCH_H_
