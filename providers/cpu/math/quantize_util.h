// Helpers for the quantized kernels (MatMulInteger, QLinearMatMul,
// DynamicQuantizeLinear, ConvInteger, QLinearConv): reading scales and zero
// points, rounding back to 8-bit with saturation, and the range of a float
// tensor that dynamic quantization starts from.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/parallel_for.h"
#include "onyx/tensor.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/simd/vector_math.h"

namespace onyx {

// round-half-to-even(v) + zero_point, clamped to Q's range.
template <typename Q>
inline Q SaturateRound(float v, int32_t zero_point) {
  const float r = std::nearbyint(v) + static_cast<float>(zero_point);
  const float lo = static_cast<float>(std::numeric_limits<Q>::min());
  const float hi = static_cast<float>(std::numeric_limits<Q>::max());
  return static_cast<Q>(std::min(std::max(r, lo), hi));
}

// The values of an optional zero-point tensor as int32 (one 0 when absent).
inline std::vector<int32_t> ZeroPoints(const Tensor* t) {
  if (t == nullptr || t->num_elements() == 0) return {0};
  std::vector<int32_t> out(t->num_elements());
  for (int64_t i = 0; i < t->num_elements(); ++i) out[i] = static_cast<int32_t>(ScalarAsInt64(*t, i));
  return out;
}

// The values of a scale tensor as float.
inline std::vector<float> Scales(const Tensor& t) {
  std::vector<float> out(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) out[i] = static_cast<float>(ScalarAsDouble(t, i));
  return out;
}

// Copies an 8-bit tensor into int32 with `zero_points` subtracted; zero point
// j applies to elements whose index along the per-channel dimension is j:
// index = (i / inner) % count, where count = zero_points.size().
inline std::vector<int32_t> Dequantize8(const Tensor& t, const std::vector<int32_t>& zero_points, int64_t inner) {
  std::vector<int32_t> out(t.num_elements());
  const int64_t count = static_cast<int64_t>(zero_points.size());
  inner = std::max<int64_t>(inner, 1);
  auto fill = [&](auto* p) {
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      out[i] = static_cast<int32_t>(p[i]) - zero_points[count == 1 ? 0 : (i / inner) % count];
    }
  };
  if (t.type() == DataType::kInt8) fill(t.data<int8_t>());
  else fill(t.data<uint8_t>());
  return out;
}

// The range of x[0, n) widened to include 0 (what DynamicQuantizeLinear and
// DynamicQuantizeMatMul quantize over): per block on the intra-op threads,
// then across blocks.
inline void ParallelRangeWithZero(const float* x, int64_t n, float* lo, float* hi) {
  constexpr int64_t kBlock = 16384;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<float> block_lo(blocks, 0.f), block_hi(blocks, 0.f);
  ParallelFor(blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      simd::RangeWithZero(x + b * kBlock, std::min(n, (b + 1) * kBlock) - b * kBlock, &block_lo[b], &block_hi[b]);
    }
  });
  *lo = 0.f;
  *hi = 0.f;
  for (int64_t b = 0; b < blocks; ++b) {
    *lo = std::min(*lo, block_lo[b]);
    *hi = std::max(*hi, block_hi[b]);
  }
}

}  // namespace onyx
