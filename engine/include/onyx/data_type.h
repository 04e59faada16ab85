// Element types of onyx tensors. Values equal ONNX TensorProto.DataType so that
// conversion to and from the ONNX protobuf is a cast.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace onyx {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
};

// Bytes per element; 0 for kUndefined. kString reports sizeof(std::string)
// because string tensors hold std::string objects.
size_t ElementSize(DataType type);

// ONNX spelling ("float", "int64", "string", ...); "undefined" for unknown values.
const char* DataTypeName(DataType type);

// True for the values listed above except kUndefined.
bool IsValidDataType(int32_t value);

// IEEE half and bfloat16 conversions (round to nearest even).
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
float BFloat16ToFloat(uint16_t b);
uint16_t FloatToBFloat16(float f);

}  // namespace onyx
