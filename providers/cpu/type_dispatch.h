// Calls a generic lambda with a value of the C++ type matching a DataType.
//
//   return DispatchTypes<float, double, int32_t, int64_t>(x.type(), [&](auto tag) {
//     using T = decltype(tag);
//     ...
//     return absl::OkStatus();
//   });
//
// float16 and bfloat16 are carried as the wrapper types Half / BFloat16 so that
// kernels choose explicitly how to compute them (usually via float).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "onyx/data_type.h"

namespace onyx {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

template <typename T>
constexpr DataType DataTypeOf() {
  if constexpr (std::is_same_v<T, float>) return DataType::kFloat;
  else if constexpr (std::is_same_v<T, double>) return DataType::kDouble;
  else if constexpr (std::is_same_v<T, int8_t>) return DataType::kInt8;
  else if constexpr (std::is_same_v<T, int16_t>) return DataType::kInt16;
  else if constexpr (std::is_same_v<T, int32_t>) return DataType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return DataType::kInt64;
  else if constexpr (std::is_same_v<T, uint8_t>) return DataType::kUint8;
  else if constexpr (std::is_same_v<T, uint16_t>) return DataType::kUint16;
  else if constexpr (std::is_same_v<T, uint32_t>) return DataType::kUint32;
  else if constexpr (std::is_same_v<T, uint64_t>) return DataType::kUint64;
  else if constexpr (std::is_same_v<T, bool>) return DataType::kBool;
  else if constexpr (std::is_same_v<T, std::string>) return DataType::kString;
  else if constexpr (std::is_same_v<T, Half>) return DataType::kFloat16;
  else if constexpr (std::is_same_v<T, BFloat16>) return DataType::kBFloat16;
  else return DataType::kUndefined;
}

template <typename... Ts, typename Fn>
absl::Status DispatchTypes(DataType type, Fn&& fn) {
  absl::Status result = absl::UnimplementedError(
      absl::StrCat("element type ", DataTypeName(type), " is not supported by this kernel"));
  bool matched = false;
  (
      [&] {
        if (!matched && DataTypeOf<Ts>() == type) {
          matched = true;
          result = fn(Ts{});
        }
      }(),
      ...);
  return result;
}

inline float ToFloat(Half h) { return HalfToFloat(h.bits); }
inline float ToFloat(BFloat16 b) { return BFloat16ToFloat(b.bits); }

}  // namespace onyx
