// Compiled once per SIMD target (foreach_target.h re-includes this file);
// HWY_DYNAMIC_DISPATCH picks the best at the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "providers/cpu/simd/stem_conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep (must precede highway.h)

#include <algorithm>
#include <cstring>
#include <limits>

#include "hwy/highway.h"
#include "providers/cpu/simd/stem_conv.h"

HWY_BEFORE_NAMESPACE();
namespace onyx::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;
using P = StemConvParams;

// Stores kPix pixels x kVec vectors of accumulators through `activate`.
template <int kPix, int kVec, class Fn>
HWY_INLINE void StoreTile(D d, V (&acc)[kPix][kVec], float* out, int64_t pixel_stride, int64_t valid, Fn activate) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int q = 0; q < kPix; ++q) {
    float* o = out + q * pixel_stride;
    if (valid >= kVec * lanes) {
      for (int v = 0; v < kVec; ++v) hn::StoreU(activate(acc[q][v]), d, o + v * lanes);
    } else {                             // the zero-padded channels of the last block stay out of y
      HWY_ALIGN float block[kVec * 16];  // 16 >= the widest target's lanes
      for (int v = 0; v < kVec; ++v) hn::Store(activate(acc[q][v]), d, block + v * lanes);
      std::memcpy(o, block, valid * sizeof(float));
    }
  }
}

// One switch per tile, outside the stores: a switch per vector keeps the
// compiler from holding the accumulators in registers.
template <int kPix, int kVec>
HWY_INLINE void ActivateAndStore(D d, const P& p, V (&acc)[kPix][kVec], float* out, int64_t valid) {
  const V alpha = hn::Set(d, p.alpha), beta = hn::Set(d, p.beta), zero = hn::Zero(d), one = hn::Set(d, 1.f);
  const int64_t stride = p.out_channels;
  switch (p.activation) {
    case P::Activation::kNone: StoreTile(d, acc, out, stride, valid, [](V v) { return v; }); break;
    case P::Activation::kClamp:
      StoreTile(d, acc, out, stride, valid, [&](V v) { return hn::Min(hn::Max(v, alpha), beta); });
      break;
    case P::Activation::kLeakyRelu:
      StoreTile(d, acc, out, stride, valid, [&](V v) { return hn::IfThenElse(hn::Lt(v, zero), hn::Mul(v, alpha), v); });
      break;
    case P::Activation::kHardSigmoid:
      StoreTile(d, acc, out, stride, valid,
                [&](V v) { return hn::Min(hn::Max(hn::MulAdd(v, alpha, beta), zero), one); });
      break;
    case P::Activation::kHardSwish: {
      const V sixth = hn::Set(d, 1.f / 6.f), half = hn::Set(d, 0.5f);
      StoreTile(d, acc, out, stride, valid,
                [&](V v) { return hn::Mul(v, hn::Min(hn::Max(hn::MulAdd(v, sixth, half), zero), one)); });
      break;
    }
  }
}

// kPix consecutive output pixels of one row times kVec vectors of output
// channels, all in registers while every tap is multiplied in. `rows` holds
// the input row of each (c, kh), nullptr where it lies in the padding;
// kCheck skips columns in the padding (the row's first and last pixels).
template <int kPix, int kVec, bool kCheck>
HWY_INLINE void Tile(const P& p, const float* const* rows, const float* w, int64_t width, const float* bias,
                     int64_t ow0, float* out, int64_t valid) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  V acc[kPix][kVec];
  for (int v = 0; v < kVec; ++v) {
    const V b = hn::LoadU(d, bias + v * lanes);
    for (int q = 0; q < kPix; ++q) acc[q][v] = b;
  }
  const int64_t stride = p.stride_w, kernel_w = p.kernel_w;
  const int64_t iw0 = ow0 * stride - p.pad_left;
  const int64_t row_count = p.channels * p.kernel_h;
  for (int64_t r = 0; r < row_count; ++r) {
    const float* row = rows[r];
    if (row == nullptr) continue;
    const float* wk = w + r * kernel_w * width;
    for (int64_t k = 0; k < kernel_w; ++k, wk += width) {
      V wv[kVec];
      for (int v = 0; v < kVec; ++v) wv[v] = hn::LoadU(d, wk + v * lanes);
      for (int q = 0; q < kPix; ++q) {
        const int64_t iw = iw0 + q * stride + k;
        if (kCheck && (iw < 0 || iw >= p.width)) continue;
        const V xv = hn::Set(d, row[iw]);
        for (int v = 0; v < kVec; ++v) acc[q][v] = hn::MulAdd(xv, wv[v], acc[q][v]);
      }
    }
  }
  ActivateAndStore(d, p, acc, out, valid);
}

// One output row's channels [c, c + kVec lanes) (`valid` of them real),
// kPix pixels at a time where the whole tile reads inside the row.
template <int kPix, int kVec>
HWY_NOINLINE void RowPass(const P& p, const float* const* rows, const float* w, int64_t width, const float* bias,
                          float* y, int64_t valid) {
  auto inside = [&](int64_t first, int64_t count) {
    return first * p.stride_w - p.pad_left >= 0 &&
           (first + count - 1) * p.stride_w - p.pad_left + p.kernel_w <= p.width;
  };
  auto one = [&](int64_t ow) {
    if (inside(ow, 1)) {
      Tile<1, kVec, false>(p, rows, w, width, bias, ow, y + ow * p.out_channels, valid);
    } else {
      Tile<1, kVec, true>(p, rows, w, width, bias, ow, y + ow * p.out_channels, valid);
    }
  };
  int64_t ow = 0;
  for (; ow + kPix <= p.out_w; ow += kPix) {
    if (inside(ow, kPix)) {
      Tile<kPix, kVec, false>(p, rows, w, width, bias, ow, y + ow * p.out_channels, valid);
    } else {
      for (int q = 0; q < kPix; ++q) one(ow + q);
    }
  }
  for (; ow < p.out_w; ++ow) one(ow);
}

void StemConvRowsImpl(const P& p, int64_t begin, int64_t end, float* out) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t taps = p.channels * p.kernel_h * p.kernel_w;
  const float* rows[kStemMaxTaps];  // C * KH <= taps
  for (int64_t i = begin; i < end; ++i) {
    const int64_t n = i / p.out_h, oy = i % p.out_h;
    for (int64_t c = 0; c < p.channels; ++c) {
      for (int64_t kh = 0; kh < p.kernel_h; ++kh) {
        const int64_t ih = oy * p.stride_h - p.pad_top + kh;
        rows[c * p.kernel_h + kh] =
            ih >= 0 && ih < p.height ? p.x + ((n * p.channels + c) * p.height + ih) * p.width : nullptr;
      }
    }
    float* y = out + (i - begin) * p.out_w * p.out_channels;
    for (int64_t c0 = 0; c0 < p.out_channels; c0 += kStemBlock) {
      const int64_t width = std::min(kStemBlock, (p.out_channels - c0 + 15) / 16 * 16);
      const float* w = p.packed + c0 * taps;
      const float* bias = p.bias + c0;
      const int64_t vectors = width / lanes;
#if HWY_MAX_BYTES >= 64
      // 32 vector registers: 24 accumulators, the block's weights for one
      // tap, and the broadcast input.
      const int64_t valid = p.out_channels - c0;
      switch (vectors) {
        case 4: RowPass<6, 4>(p, rows, w, width, bias, y + c0, valid); break;
        case 3: RowPass<8, 3>(p, rows, w, width, bias, y + c0, valid); break;
        case 2: RowPass<12, 2>(p, rows, w, width, bias, y + c0, valid); break;
        default: RowPass<12, 1>(p, rows, w, width, bias, y + c0, valid); break;
      }
#else
      // 16 registers: two vectors of channels at a time, 12 accumulators.
      for (int64_t v0 = 0; v0 < vectors; v0 += 2) {
        const int64_t valid = p.out_channels - c0 - v0 * lanes;
        if (valid <= 0) break;
        if (vectors - v0 >= 2) {
          RowPass<6, 2>(p, rows, w + v0 * lanes, width, bias + v0 * lanes, y + c0 + v0 * lanes, valid);
        } else {
          RowPass<6, 1>(p, rows, w + v0 * lanes, width, bias + v0 * lanes, y + c0 + v0 * lanes, valid);
        }
      }
#endif
    }
  }
}

void MaxPoolRowImpl(const float* const* rows, int64_t count, int64_t width, int64_t channels, int64_t kernel_w,
                    int64_t stride_w, int64_t pad_left, int64_t out_w, float* out) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  constexpr float kLowest = -std::numeric_limits<float>::infinity();
  for (int64_t ox = 0; ox < out_w; ++ox) {
    const int64_t first = std::max<int64_t>(0, ox * stride_w - pad_left);
    const int64_t last = std::min(width, ox * stride_w - pad_left + kernel_w);
    float* o = out + ox * channels;
    int64_t c = 0;
    for (; c + lanes <= channels; c += lanes) {
      V acc = hn::Set(d, kLowest);
      for (int64_t r = 0; r < count; ++r) {
        for (int64_t col = first; col < last; ++col) acc = hn::Max(acc, hn::LoadU(d, rows[r] + col * channels + c));
      }
      hn::StoreU(acc, d, o + c);
    }
    for (; c < channels; ++c) {
      float acc = kLowest;
      for (int64_t r = 0; r < count; ++r) {
        for (int64_t col = first; col < last; ++col) acc = std::max(acc, rows[r][col * channels + c]);
      }
      o[c] = acc;
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace onyx::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onyx::simd {

HWY_EXPORT(StemConvRowsImpl);
HWY_EXPORT(MaxPoolRowImpl);

namespace {
int64_t PaddedChannels(int64_t m) { return (m + 15) / 16 * 16; }
}  // namespace

std::vector<float> PackStemWeights(const float* w, int64_t m, int64_t taps) {
  std::vector<float> packed(PaddedChannels(m) * taps, 0.f);
  for (int64_t c0 = 0; c0 < m; c0 += kStemBlock) {
    const int64_t width = std::min(kStemBlock, PaddedChannels(m) - c0);
    float* block = packed.data() + c0 * taps;
    for (int64_t j = 0; j < std::min(kStemBlock, m - c0); ++j) {
      for (int64_t t = 0; t < taps; ++t) block[t * width + j] = w[(c0 + j) * taps + t];
    }
  }
  return packed;
}

std::vector<float> PackStemBias(const float* bias, int64_t m) {
  std::vector<float> padded(PaddedChannels(m), 0.f);
  if (bias != nullptr) std::copy(bias, bias + m, padded.begin());
  return padded;
}

void StemConvRows(const StemConvParams& params, int64_t begin, int64_t end, float* y) {
  HWY_DYNAMIC_DISPATCH(StemConvRowsImpl)(params, begin, end, y);
}

void MaxPoolRow(const float* const* rows, int64_t count, int64_t width, int64_t channels, int64_t kernel_w,
                int64_t stride_w, int64_t pad_left, int64_t out_w, float* out) {
  HWY_DYNAMIC_DISPATCH(MaxPoolRowImpl)(rows, count, width, channels, kernel_w, stride_w, pad_left, out_w, out);
}

}  // namespace onyx::simd
#endif  // HWY_ONCE
