#include "braid/dtype.h"

#include <cmath>
#include <cstring>

namespace braid {

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kUInt8: return 1;
    case DType::kBool: return sizeof(bool);
    case DType::kFloat16:
      return 2;
  }
  return 0;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kUInt8: return "uint8";
    case DType::kBool: return "bool";
    case DType::kFloat16:
      return "float16";
  }
  return "unknown";
}

namespace {

// `value` >> shift, rounded to the nearest integer, ties to even.
template <typename Bits>
Bits ShiftRoundingToEven(Bits value, int shift) {
  const Bits kept = value >> shift;
  const Bits rest = value & ((Bits{1} << shift) - 1);
  const Bits half = Bits{1} << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
}

}  // namespace

uint16_t FloatToHalfBits(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof(x));
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) {  // infinity, or NaN (kept quiet, with the payload's top bits)
    return x == 0x7f800000u ? sign | 0x7c00u
                            : static_cast<uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));
  }
  if (x >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and above round to infinity
  if (x >= 0x38800000u) {                       // 2^-14 and above: a normal half
    // The exponent rebiased from 127 to 15 (112 << 10 in the shifted field); a mantissa that
    // rounds up carries into the exponent, which is still finite below 65520.
    return static_cast<uint16_t>(sign | (ShiftRoundingToEven(x, 13) - (112u << 10)));
  }
  if (x <= 0x33000000u) return sign;  // at most 2^-25: rounds to zero (2^-25 is a tie, to even)
  // A subnormal half: units of 2^-24. The float is (1.mantissa) 2^(e - 127) = m 2^(e - 150).
  const uint32_t exponent = x >> 23;
  const uint32_t mantissa = (x & 0x7fffffu) | 0x800000u;
  return static_cast<uint16_t>(sign |
                               ShiftRoundingToEven(mantissa, static_cast<int>(126 - exponent)));
}

uint16_t DoubleToHalfBits(double value) {  // FloatToHalfBits on a double's 64 bits
  uint64_t x;
  std::memcpy(&x, &value, sizeof(x));
  const uint16_t sign = static_cast<uint16_t>((x >> 48) & 0x8000u);
  x &= 0x7fffffffffffffffull;
  if (x >= 0x7ff0000000000000ull) {
    return x == 0x7ff0000000000000ull
               ? sign | 0x7c00u
               : static_cast<uint16_t>(sign | 0x7e00u | ((x >> 42) & 0x3ffu));
  }
  if (x >= 0x40effe0000000000ull) return sign | 0x7c00u;  // 65520 and above
  if (x >= 0x3f10000000000000ull) {                       // 2^-14 and above: normal
    return static_cast<uint16_t>(sign | (ShiftRoundingToEven(x, 42) - (uint64_t{1008} << 10)));
  }
  if (x <= 0x3e60000000000000ull) return sign;  // at most 2^-25
  const uint64_t exponent = x >> 52;
  const uint64_t mantissa = (x & 0xfffffffffffffull) | (uint64_t{1} << 52);
  return static_cast<uint16_t>(sign |
                               ShiftRoundingToEven(mantissa, static_cast<int>(1051 - exponent)));
}

float HalfBitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  uint32_t x;
  if (exponent == 0x1f) {
    x = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    x = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else {  // zero or subnormal: mantissa 2^-24, exact in a float
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  float value;
  std::memcpy(&value, &x, sizeof(value));
  return value;
}

}  // namespace braid
