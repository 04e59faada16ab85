// The first convolution of an image network, run directly: few input
// channels (the client's image, channels first [N, C, H, W]) into many
// output channels written channels last [N, OH, OW, M], the layout of the
// layers that follow. A general convolution library needs the image
// transposed to channels last first (a pass over the whole input) and
// keeps its vector lanes mostly empty with 3 input channels; here every
// FMA multiplies one input pixel, read straight from its channels-first
// row, into a vector of output channels.
//
//   std::vector<float> packed = simd::PackStemWeights(w, m, taps);  // once
//   simd::StemConvRows(params, first_row, end_row, y);  // rows of N * OH, any thread
//
// Sums each output in the order bias, then taps (c, kh, kw) ascending,
// with FMA where the target has it; padding contributes nothing.
#pragma once

#include <cstdint>
#include <vector>

namespace onyx::simd {

// Output channels per packed block.
inline constexpr int64_t kStemBlock = 64;

// The widest input a stem convolution takes: C * KH * KW taps per output.
// Wider ones (a vision transformer's 16x16 patches, 768 taps) are products
// of a large matrix, which a GEMM runs better.
inline constexpr int64_t kStemMaxTaps = 256;
inline constexpr int64_t kStemMaxChannels = 4;

// W [m, taps] (taps = C KH KW in row-major order) into blocks of kStemBlock
// output channels, the last one's width rounded up to a multiple of 16 and
// padded with zeros: block b holds, for each tap, its output channels
// contiguously. The layout does not depend on the SIMD target.
std::vector<float> PackStemWeights(const float* w, int64_t m, int64_t taps);

// The bias (or zeros for nullptr), padded like the packed weights.
std::vector<float> PackStemBias(const float* bias, int64_t m);

struct StemConvParams {
  const float* x = nullptr;  // [N, C, H, W]
  int64_t channels = 0, height = 0, width = 0;
  int64_t kernel_h = 0, kernel_w = 0, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
  int64_t out_h = 0, out_w = 0, out_channels = 0;
  const float* packed = nullptr;  // PackStemWeights
  const float* bias = nullptr;    // PackStemBias
  // Applied in registers before the store.
  enum class Activation {
    kNone,
    kClamp,        // min(max(y, alpha), beta): Relu is [0, inf), Clip, ReLU6
    kLeakyRelu,    // y < 0 ? alpha y : y
    kHardSigmoid,  // max(0, min(1, alpha y + beta))
    kHardSwish,    // y max(0, min(1, y / 6 + 1/2))
  };
  Activation activation = Activation::kNone;
  float alpha = 0.f, beta = 0.f;
};

// Computes rows [begin, end) of the N * OH output rows [N, OH, OW, M] (each
// OW x M floats) into y, which receives row `begin` first.
void StemConvRows(const StemConvParams& params, int64_t begin, int64_t end, float* y);

// One output row of a max pool over channels-last rows (ResNet's pool after
// its stem, run on stem rows still in cache): `count` input rows of `width`
// pixels x `channels`, the window's rows inside the input (padding rows left
// out); out[x, c] is the max over those rows and the columns
// [x stride - pad_left, + kernel_w) inside [0, width), -inf for a window
// wholly in the padding.
void MaxPoolRow(const float* const* rows, int64_t count, int64_t width, int64_t channels, int64_t kernel_w,
                int64_t stride_w, int64_t pad_left, int64_t out_w, float* out);

}  // namespace onyx::simd
