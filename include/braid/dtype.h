// Element types of braid tensors and their C++ counterparts.
//
//   DType t = DTypeOf<float>();        // DType::kFloat32
//   size_t bytes = DTypeSize(t) * n;
//   Float16 h(0.1f);                   // IEEE half precision: 0.0999755859375
//   float back = h;
//
// float16 is a type of storage and exchange: tensors, the Predictor's and Session's inputs and
// outputs, .npy files, TensorProtos and ONNX initializers hold it, and Cast, FloatToHalf and
// HalfToFloat convert to and from it; the ops that compute take float32 (an op given float16
// says which dtypes it takes).
//
// Thread safety: values and pure functions, usable from any thread.
#ifndef BRAID_DTYPE_H_
#define BRAID_DTYPE_H_

#include <cstddef>
#include <cstdint>

namespace braid {

enum class DType { kFloat32, kFloat64, kInt32, kInt64, kUInt8, kBool, kFloat16 };

size_t DTypeSize(DType dtype);
const char* DTypeName(DType dtype);

// IEEE 754 binary16 bits from a float, rounded to the nearest (ties to even); beyond the largest
// half (65504) by half an ulp or more: infinity; NaN stays NaN. And back (exact).
uint16_t FloatToHalfBits(float value);
uint16_t DoubleToHalfBits(double value);  // rounded once, from the double (not via a float)
float HalfBitsToFloat(uint16_t bits);

// A float16 element: its bits, converted from float explicitly and to float implicitly.
class Float16 {
 public:
  Float16() = default;
  explicit Float16(float value) : bits_(FloatToHalfBits(value)) {}
  operator float() const { return HalfBitsToFloat(bits_); }
  static Float16 FromBits(uint16_t bits) {
    Float16 h;
    h.bits_ = bits;
    return h;
  }
  uint16_t bits() const { return bits_; }

 private:
  uint16_t bits_ = 0;
};
static_assert(sizeof(Float16) == 2, "a float16 tensor is an array of Float16");

template <typename T> constexpr DType DTypeOf();
template <> constexpr DType DTypeOf<float>() { return DType::kFloat32; }
template <> constexpr DType DTypeOf<double>() { return DType::kFloat64; }
template <> constexpr DType DTypeOf<int32_t>() { return DType::kInt32; }
template <> constexpr DType DTypeOf<int64_t>() { return DType::kInt64; }
template <> constexpr DType DTypeOf<uint8_t>() { return DType::kUInt8; }
template <> constexpr DType DTypeOf<bool>() { return DType::kBool; }
template <>
constexpr DType DTypeOf<Float16>() {
  return DType::kFloat16;
}

}  // namespace braid

#endif  // BRAID_DTYPE_H_
