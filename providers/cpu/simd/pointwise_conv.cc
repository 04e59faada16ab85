// Compiled once per SIMD target (foreach_target.h re-includes this file);
// HWY_DYNAMIC_DISPATCH picks the best at the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "providers/cpu/simd/pointwise_conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep (must precede highway.h)

#include <algorithm>
#include <cmath>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "providers/cpu/simd/pointwise_conv.h"

HWY_BEFORE_NAMESPACE();
namespace onyx::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;
using P = PointwiseConvParams;

// kPix pixels x kVec vectors of output channels from `pixel` on; the last
// vector holds `tail` channels (lanes when full).
template <int kPix, int kVec, bool kResidual>
HWY_INLINE void Tile(const P& p, int64_t pixel, int64_t tail) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t c = p.in_channels, m = p.out_channels;
  V acc[kPix][kVec];
  for (int v = 0; v < kVec; ++v) {
    const V b = hn::LoadU(d, p.packed + v * lanes);
    for (int q = 0; q < kPix; ++q) acc[q][v] = b;
  }
  const float* x = p.x + pixel * c;
  // The next tile's pixels, a tile ahead: the hardware prefetcher alone
  // leaves these streams waiting on memory.
  if constexpr (kPix > 1) {
    for (int64_t i = 0; i < kPix * c; i += 16) hwy::Prefetch(x + kPix * c + i);
    if constexpr (kResidual) {
      for (int64_t i = 0; i < kPix * p.out_channels; i += 16) hwy::Prefetch(p.z + (pixel + kPix) * p.out_channels + i);
    }
  }
  const float* w = p.packed + kPointwiseMaxChannels;
  for (int64_t k = 0; k < c; ++k, w += kPointwiseMaxChannels) {
    V wv[kVec];
    for (int v = 0; v < kVec; ++v) wv[v] = hn::LoadU(d, w + v * lanes);
    for (int q = 0; q < kPix; ++q) {
      const V xb = hn::Set(d, x[q * c + k]);
      for (int v = 0; v < kVec; ++v) acc[q][v] = hn::MulAdd(xb, wv[v], acc[q][v]);
    }
  }
  const V lo = hn::Set(d, p.lo), hi = hn::Set(d, p.hi);
  for (int q = 0; q < kPix; ++q) {
    float* y = p.y + (pixel + q) * m;
    const float* z = kResidual ? p.z + (pixel + q) * m : nullptr;
    for (int v = 0; v < kVec; ++v) {
      V r = acc[q][v];
      if (v + 1 < kVec || tail == lanes) {
        if constexpr (kResidual) r = hn::Add(r, hn::LoadU(d, z + v * lanes));
        hn::StoreU(hn::Min(hn::Max(r, lo), hi), d, y + v * lanes);
        continue;
      }
      // A partial last vector goes through a buffer: no access past the
      // pixel's channels, which the next pixel's thread may be writing.
      HWY_ALIGN float part[16] = {};  // 16 >= the widest target's lanes
      if constexpr (kResidual) {
        std::copy(z + v * lanes, z + v * lanes + tail, part);
        r = hn::Add(r, hn::Load(d, part));
      }
      hn::Store(hn::Min(hn::Max(r, lo), hi), d, part);
      std::copy(part, part + tail, y + v * lanes);
    }
  }
}

// Pixels per tile: accumulators in about three quarters of the registers.
template <int kVec>
constexpr int PixelsPerTile() {
#if HWY_TARGET <= HWY_AVX3
  return kVec == 1 ? 16 : 24 / kVec;
#else
  return kVec == 1 ? 8 : (12 / kVec > 0 ? 12 / kVec : 1);
#endif
}

template <int kVec, bool kResidual>
HWY_INLINE void Run(const P& p, int64_t begin, int64_t end, int64_t tail) {
  constexpr int kPix = PixelsPerTile<kVec>();
  int64_t i = begin;
  for (; i + kPix <= end; i += kPix) Tile<kPix, kVec, kResidual>(p, i, tail);
  for (; i < end; ++i) Tile<1, kVec, kResidual>(p, i, tail);
}

template <int kVec>
HWY_INLINE void RunFor(const P& p, int64_t begin, int64_t end, int64_t tail) {
  if (p.z != nullptr) {
    Run<kVec, true>(p, begin, end, tail);
  } else {
    Run<kVec, false>(p, begin, end, tail);
  }
}

void PointwiseConvRowsImpl(const P& p, int64_t begin, int64_t end) {
  if (begin >= end || p.out_channels <= 0) return;
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t vectors = (p.out_channels + lanes - 1) / lanes;
  const int64_t tail = p.out_channels - (vectors - 1) * lanes;
  // kPointwiseMaxChannels / lanes vectors at most: 2 (AVX-512), 4 (AVX2),
  // 8 (SSE4); one lane at a time beyond (the scalar target).
  if (vectors > 8) {
    for (int64_t i = begin; i < end; ++i) {
      for (int64_t j = 0; j < p.out_channels; ++j) {
        float r = p.packed[j];
        for (int64_t k = 0; k < p.in_channels; ++k) {
          r = std::fma(p.x[i * p.in_channels + k], p.packed[(k + 1) * kPointwiseMaxChannels + j], r);
        }
        if (p.z != nullptr) r += p.z[i * p.out_channels + j];
        p.y[i * p.out_channels + j] = std::min(std::max(r, p.lo), p.hi);
      }
    }
    return;
  }
  switch (vectors) {
    case 1: RunFor<1>(p, begin, end, tail); break;
    case 2: RunFor<2>(p, begin, end, tail); break;
    case 3: RunFor<3>(p, begin, end, tail); break;
    case 4: RunFor<4>(p, begin, end, tail); break;
    case 5: RunFor<5>(p, begin, end, tail); break;
    case 6: RunFor<6>(p, begin, end, tail); break;
    case 7: RunFor<7>(p, begin, end, tail); break;
    default: RunFor<8>(p, begin, end, tail); break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace onyx::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onyx::simd {

HWY_EXPORT(PointwiseConvRowsImpl);

std::vector<float> PackPointwiseWeights(const float* w, int64_t m, int64_t c, const float* bias) {
  std::vector<float> packed((c + 1) * kPointwiseMaxChannels, 0.f);
  for (int64_t j = 0; j < m; ++j) {
    if (bias != nullptr) packed[j] = bias[j];
    for (int64_t k = 0; k < c; ++k) packed[(k + 1) * kPointwiseMaxChannels + j] = w[j * c + k];
  }
  return packed;
}

void PointwiseConvRows(const PointwiseConvParams& params, int64_t begin, int64_t end) {
  HWY_DYNAMIC_DISPATCH(PointwiseConvRowsImpl)(params, begin, end);
}

}  // namespace onyx::simd
#endif  // HWY_ONCE
