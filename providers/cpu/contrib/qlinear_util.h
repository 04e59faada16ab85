// Per-tensor quantization parameters and ONNX Runtime's (MLAS's) rounding, for
// the com.microsoft QLinear* kernels.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/status/statusor.h"
#include "framework/op_kernel.h"

namespace onyx {

struct QuantParams {
  float scale = 1.f;
  int32_t zero_point = 0;
};

// The scale (float, one element) of input `scale_input` and the zero point
// (the element type of input `data_input`, one element, 0 when omitted) of
// input `zp_input`; errors name the node and the inputs.
absl::StatusOr<QuantParams> ReadQuantParams(const OpKernelContext& ctx, int data_input, int scale_input, int zp_input);

// MlasQuantizeLinear: round_half_even(v / scale) + zero_point, saturated to Q.
template <typename Q>
inline Q QuantizeValue(float v, float scale, int32_t zero_point) {
  const float lo = static_cast<float>(static_cast<int32_t>(std::numeric_limits<Q>::lowest()) - zero_point);
  const float hi = static_cast<float>(static_cast<int32_t>(std::numeric_limits<Q>::max()) - zero_point);
  const float q = std::min(std::max(v / scale, lo), hi);
  return static_cast<Q>(static_cast<int32_t>(std::nearbyint(q)) + zero_point);
}

// round_half_even(v) saturated to Q (v already includes the zero point).
template <typename Q>
inline Q SaturateRoundHalfEven(float v) {
  const float lo = static_cast<float>(std::numeric_limits<Q>::lowest());
  const float hi = static_cast<float>(std::numeric_limits<Q>::max());
  return static_cast<Q>(std::nearbyint(std::min(std::max(v, lo), hi)));
}

// table[byte] = quantize(f(dequantize(byte))) for the 256 values of Q, as ONNX
// Runtime's QlinearBuildLookupTable computes it.
template <typename Q, typename Fn>
void BuildLookupTable(const QuantParams& x, const QuantParams& y, Fn&& f, uint8_t* table) {
  for (int i = 0; i < 256; ++i) {
    const Q q = static_cast<Q>(static_cast<uint8_t>(i));
    const float value = x.scale * static_cast<float>(static_cast<int32_t>(q) - x.zero_point);
    const Q out = QuantizeValue<Q>(f(value), y.scale, y.zero_point);
    table[i] = static_cast<uint8_t>(out);
  }
}

}  // namespace onyx
