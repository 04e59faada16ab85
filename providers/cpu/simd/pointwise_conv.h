// A 1x1 stride-1 convolution into few output channels (MobileNet's and
// EfficientNet's projections to 16-32 channels, squeeze-excite's reductions),
// channels last: y[p, :] = clamp(bias + W x[p, :] (+ z[p, :]), lo, hi) for
// each pixel p. With so few output channels a convolution library's blocking
// leaves its vector lanes and registers half used (and 24 channels split
// into a full and a masked block); here every FMA multiplies one input value
// of a pixel into a vector of output channels, 8 to 16 pixels at a time, the
// residual sum and clamp applied in registers before the store.
//
//   std::vector<float> packed = simd::PackPointwiseWeights(w, m, c, bias);  // once
//   simd::PointwiseConvRows(params, first_pixel, end_pixel);  // any thread
//
// Sums each output in the order bias, then input channels ascending, with
// FMA where the target has it.
#pragma once

#include <cstdint>
#include <vector>

namespace onyx::simd {

// The most output channels the kernel takes (and its packed row width).
inline constexpr int64_t kPointwiseMaxChannels = 32;

// W [m, c] (row-major, m <= kPointwiseMaxChannels) as c + 1 rows of
// kPointwiseMaxChannels floats: the bias (zeros for nullptr), then for each
// input channel its m weights, zero-padded. The layout does not depend on
// the SIMD target.
std::vector<float> PackPointwiseWeights(const float* w, int64_t m, int64_t c, const float* bias);

struct PointwiseConvParams {
  const float* x = nullptr;  // [pixels, in_channels]
  const float* z = nullptr;  // [pixels, out_channels] added before the clamp, or nullptr
  float* y = nullptr;        // [pixels, out_channels]; may be z
  int64_t in_channels = 0, out_channels = 0;
  const float* packed = nullptr;  // PackPointwiseWeights
  float lo = 0.f, hi = 0.f;       // the clamp: (-inf, inf) for none, [0, inf) for Relu
};

// Computes pixels [begin, end).
void PointwiseConvRows(const PointwiseConvParams& params, int64_t begin, int64_t end);

}  // namespace onyx::simd
