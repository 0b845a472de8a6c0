// Element types of braid tensors and their C++ counterparts.
//
//   DType t = DTypeOf<float>();        // DType::kFloat32
//   size_t bytes = DTypeSize(t) * n;
//
// Thread safety: values and pure functions, usable from any thread.
#ifndef BRAID_DTYPE_H_
#define BRAID_DTYPE_H_

#include <cstddef>
#include <cstdint>

namespace braid {

enum class DType { kFloat32, kFloat64, kInt32, kInt64, kUInt8, kBool };

size_t DTypeSize(DType dtype);
const char* DTypeName(DType dtype);

template <typename T> constexpr DType DTypeOf();
template <> constexpr DType DTypeOf<float>() { return DType::kFloat32; }
template <> constexpr DType DTypeOf<double>() { return DType::kFloat64; }
template <> constexpr DType DTypeOf<int32_t>() { return DType::kInt32; }
template <> constexpr DType DTypeOf<int64_t>() { return DType::kInt64; }
template <> constexpr DType DTypeOf<uint8_t>() { return DType::kUInt8; }
template <> constexpr DType DTypeOf<bool>() { return DType::kBool; }

}  // namespace braid

#endif  // BRAID_DTYPE_H_
