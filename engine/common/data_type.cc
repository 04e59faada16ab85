#include <cstring>
#include <string>

#include "onyx/data_type.h"

namespace onyx {

size_t ElementSize(DataType type) {
  switch (type) {
    case DataType::kFloat: return 4;
    case DataType::kUint8: return 1;
    case DataType::kInt8: return 1;
    case DataType::kUint16: return 2;
    case DataType::kInt16: return 2;
    case DataType::kInt32: return 4;
    case DataType::kInt64: return 8;
    case DataType::kString: return sizeof(std::string);
    case DataType::kBool: return 1;
    case DataType::kFloat16: return 2;
    case DataType::kDouble: return 8;
    case DataType::kUint32: return 4;
    case DataType::kUint64: return 8;
    case DataType::kComplex64: return 8;
    case DataType::kComplex128: return 16;
    case DataType::kBFloat16: return 2;
    case DataType::kUndefined: return 0;
  }
  return 0;
}

const char* DataTypeName(DataType type) {
  switch (type) {
    case DataType::kFloat: return "float";
    case DataType::kUint8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUint16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kDouble: return "double";
    case DataType::kUint32: return "uint32";
    case DataType::kUint64: return "uint64";
    case DataType::kComplex64: return "complex64";
    case DataType::kComplex128: return "complex128";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kUndefined: return "undefined";
  }
  return "undefined";
}

bool IsValidDataType(int32_t value) { return value >= 1 && value <= 16; }

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3ff;
      bits = sign | (exponent << 23) | (mantissa << 13);
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t abs = x & 0x7fffffff;
  if (abs >= 0x7f800000) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0));
  }
  if (abs >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);  // overflow -> inf
  if (abs < 0x38800000) {                                              // subnormal or zero in half
    if (abs < 0x33000000) return static_cast<uint16_t>(sign);
    uint32_t exponent = abs >> 23;
    uint32_t mantissa = (abs & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - exponent;  // 14 - (exponent - 112)
    uint32_t half_mantissa = mantissa >> (shift);
    uint32_t remainder = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half_mantissa & 1))) ++half_mantissa;
    return static_cast<uint16_t>(sign | half_mantissa);
  }
  uint32_t rounded = abs + 0xfff + ((abs >> 13) & 1);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000) >> 13));
}

float BFloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet nan
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

}  // namespace onyx
