// Compiled once per SIMD target: foreach_target.h re-includes this file with
// HWY_NAMESPACE set to each target's namespace; HWY_EXPORT and
// HWY_DYNAMIC_DISPATCH pick the best one at the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "providers/cpu/simd/vector_math.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep (must precede highway.h)

#include <algorithm>
#include <cmath>
#include <cstring>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "providers/cpu/simd/vector_math.h"

HWY_BEFORE_NAMESPACE();
namespace onyx::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// y = fn(x) over whole vectors, the tail through a padded block.
template <class Fn>
HWY_INLINE void Map(const float* x, float* y, int64_t n, Fn fn) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(fn(d, hn::LoadU(d, x + i)), d, y + i);
  if (i < n) {
    HWY_ALIGN float block[64] = {};  // 64 >= the widest target's lanes
    std::memcpy(block, x + i, (n - i) * sizeof(float));
    hn::Store(fn(d, hn::Load(d, block)), d, block);
    std::memcpy(y + i, block, (n - i) * sizeof(float));
  }
}

// e^x with std::exp's special values: Highway's Exp is valid up to 104 and
// does not propagate NaN.
HWY_INLINE V ExpV(D d, V x) {
  const V clamped = hn::Min(x, hn::Set(d, 100.0f));
  V y = hn::Exp(d, clamped);
  y = hn::IfThenElse(hn::Gt(x, hn::Set(d, 88.72283935546875f)), hn::Set(d, HUGE_VALF), y);
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

HWY_INLINE V LogV(D d, V x) {
  // Subnormals scaled into the normal range first: Highway's Log reads the
  // exponent field directly.
  const auto tiny = hn::Lt(x, hn::Set(d, 1.17549435e-38f));
  const V scaled = hn::IfThenElse(tiny, hn::Mul(x, hn::Set(d, 16777216.0f)), x);
  V y = hn::Log(d, hn::Max(scaled, hn::Set(d, 1.17549435e-38f)));
  y = hn::IfThenElse(tiny, hn::Sub(y, hn::Set(d, 16.635532333438687f)), y);  // 24 ln 2
  y = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), hn::Set(d, -HUGE_VALF), y);
  y = hn::IfThenElse(hn::Eq(x, hn::Set(d, HUGE_VALF)), x, y);
  const V nan = hn::Set(d, __builtin_nanf(""));
  y = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), nan, y);
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

HWY_INLINE V TanhV(D d, V x) {
  const auto nan = hn::IsNaN(x);
#if HWY_TARGET == HWY_EMU128
  // Highway's Tanh converts to int32 in its range reduction; the scalar
  // emulation does it with a C cast, undefined for NaN, so NaN lanes enter as
  // 0. Every SIMD target's conversion instruction defines the result.
  const V arg = hn::IfThenZeroElse(nan, x);
#else
  const V arg = x;
#endif
  return hn::IfThenElse(nan, x, hn::Tanh(d, arg));
}

// 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: neither side overflows
// or cancels.
HWY_INLINE V SigmoidV(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  const V e = ExpV(d, hn::Neg(hn::Abs(x)));
  const V s = hn::Div(one, hn::Add(one, e));
  const V y = hn::IfThenElse(hn::Ge(x, hn::Zero(d)), s, hn::Mul(e, s));
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// erf(a) / a = P(a^2) on |a| <= 1 (least-squares fit in double on Chebyshev
// nodes; 2.4 ulp worst in float evaluation).
HWY_INLINE V ErfSmall(D d, V a) {
  const V u = hn::Mul(a, a);
  V p = hn::Set(d, -5.654111882e-04f);
  p = hn::MulAdd(p, u, hn::Set(d, 4.923284092e-03f));
  p = hn::MulAdd(p, u, hn::Set(d, -2.671639629e-02f));
  p = hn::MulAdd(p, u, hn::Set(d, 1.128036511e-01f));
  p = hn::MulAdd(p, u, hn::Set(d, -3.761234995e-01f));
  p = hn::MulAdd(p, u, hn::Set(d, 1.128379127e+00f));
  return hn::Mul(a, p);
}

// erfc(a) for a >= 1, given a^2 exactly as hi + lo: e^(-a^2) (1/a) G(1/a),
// G fitted in double over t = 1/a in (0, 1] with G(0) = 1/sqrt(pi).
HWY_INLINE V ErfcLarge(D d, V a, V square_hi, V square_lo) {
  const V t = hn::Div(hn::Set(d, 1.0f), a);
  V g = hn::Set(d, -1.590937260e-01f);
  g = hn::MulAdd(g, t, hn::Set(d, 8.427536787e-01f));
  g = hn::MulAdd(g, t, hn::Set(d, -1.841720281e+00f));
  g = hn::MulAdd(g, t, hn::Set(d, 2.029107599e+00f));
  g = hn::MulAdd(g, t, hn::Set(d, -9.345753065e-01f));
  g = hn::MulAdd(g, t, hn::Set(d, -2.944894577e-01f));
  g = hn::MulAdd(g, t, hn::Set(d, 5.162362969e-01f));
  g = hn::MulAdd(g, t, hn::Set(d, -1.364774675e-02f));
  g = hn::MulAdd(g, t, hn::Set(d, -2.811528787e-01f));
  g = hn::MulAdd(g, t, hn::Set(d, -2.436822323e-05f));
  g = hn::MulAdd(g, t, hn::Set(d, 5.641896856e-01f));
  // e^-(hi + lo) = e^-hi (1 - lo), lo being below half an ulp of hi.
  const V e = hn::Mul(hn::Exp(d, hn::Neg(hn::Min(square_hi, hn::Set(d, 104.0f)))),
                      hn::NegMulAdd(square_lo, hn::Set(d, 1.0f), hn::Set(d, 1.0f)));
  const V y = hn::Mul(hn::Mul(e, t), g);
  return hn::IfThenElseZero(hn::Lt(square_hi, hn::Set(d, 104.0f)), y);
}

// a * a = hi + lo exactly (Dekker's product: a split into two 12-bit
// halves, so it holds on targets without FMA too).
HWY_INLINE void ExactSquare(D d, V a, V& hi, V& lo) {
  const V c = hn::Mul(a, hn::Set(d, 4097.0f));
  const V a_hi = hn::Sub(c, hn::Sub(c, a));
  const V a_lo = hn::Sub(a, a_hi);
  hi = hn::Mul(a, a);
  const V cross = hn::Mul(hn::Add(a_hi, a_hi), a_lo);
  lo = hn::Add(hn::Add(hn::Sub(hn::Mul(a_hi, a_hi), hi), cross), hn::Mul(a_lo, a_lo));
}

HWY_INLINE V ErfV(D d, V x) {
  const V a = hn::Abs(x);
  V hi, lo;
  ExactSquare(d, a, hi, lo);
  const V large = hn::Sub(hn::Set(d, 1.0f), ErfcLarge(d, hn::Max(a, hn::Set(d, 1.0f)), hi, lo));
  const V y = hn::IfThenElse(hn::Le(a, hn::Set(d, 1.0f)), ErfSmall(d, a), large);
  return hn::IfThenElse(hn::IsNaN(x), x, hn::CopySign(y, x));
}

// x/2 (1 + erf(z)), z = x / sqrt 2. Below z = -1 the bracket is erfc(-z),
// computed directly (1 + erf would cancel); z^2 = x^2 / 2 stays exact.
HWY_INLINE V GeluErfV(D d, V x) {
  const V half_x = hn::Mul(x, hn::Set(d, 0.5f));
  const V z = hn::Mul(x, hn::Set(d, 0.70710678118654752f));
  const V a = hn::Abs(z);
  V hi, lo;
  ExactSquare(d, x, hi, lo);
  hi = hn::Mul(hi, hn::Set(d, 0.5f));
  lo = hn::Mul(lo, hn::Set(d, 0.5f));
  const V tail = ErfcLarge(d, hn::Max(a, hn::Set(d, 1.0f)), hi, lo);
  const V one = hn::Set(d, 1.0f);
  const V middle = hn::Add(one, ErfSmall(d, z));
  const V bracket = hn::IfThenElse(hn::Le(a, one), middle,
                                   hn::IfThenElse(hn::Lt(z, hn::Zero(d)), tail, hn::Sub(hn::Set(d, 2.0f), tail)));
  return hn::IfThenElse(hn::IsNaN(x), x, hn::Mul(half_x, bracket));
}

// x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3): the same value as
// x/2 (1 + tanh u) without its cancellation for negative x.
HWY_INLINE V GeluTanhV(D d, V x) {
  const V x2 = hn::Mul(x, x);
  const V inner = hn::Mul(x, hn::MulAdd(x2, hn::Set(d, 0.044715f), hn::Set(d, 1.0f)));
  const V u2 = hn::Mul(inner, hn::Set(d, 1.5957691216057308f));  // 2 sqrt(2/pi)
  return hn::IfThenElse(hn::IsNaN(x), x, hn::Mul(x, SigmoidV(d, u2)));
}

HWY_INLINE V SiluV(D d, V x) { return hn::Mul(x, SigmoidV(d, x)); }

// The fast paths below take x >= kFastPathFloor (so no NaN): e^-|x| stays a
// normal float, and each value is one exp, one product and one division
// with no special-value selects (Silu and Sigmoid: about 2x fewer
// instructions). Vectors with a lane below, or NaN, take the general path.
constexpr float kFastPathFloor = -86.5f;

// e^a for kFastPathFloor <= a <= 0: a = n ln2 + r with |r| <= ln2 / 2 (ln 2
// in two parts, n ln2_hi exact), e^r by a degree-6 polynomial fitted in
// double to the relative error on Chebyshev nodes (0.8 ulp in float
// evaluation), 2^n added into the exponent bits (n >= -125: the result is
// normal).
HWY_INLINE V ExpNonPositiveV(D d, V a) {
  const hn::RebindToSigned<D> di;
  const V round = hn::Set(d, 12582912.0f);  // 1.5 * 2^23: the sum's low bits hold the rounded integer
  const V t = hn::MulAdd(a, hn::Set(d, 1.44269504088896341f), round);
  const V n = hn::Sub(t, round);
  V r = hn::NegMulAdd(n, hn::Set(d, 0.693359375f), a);
  r = hn::NegMulAdd(n, hn::Set(d, -2.12194440e-4f), r);
  V p = hn::Set(d, 1.3859285973e-03f);
  p = hn::MulAdd(p, r, hn::Set(d, 8.3747701719e-03f));
  p = hn::MulAdd(p, r, hn::Set(d, 4.1667725891e-02f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.6666421294e-01f));
  p = hn::MulAdd(p, r, hn::Set(d, 4.9999994040e-01f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  p = hn::MulAdd(p, r, hn::Set(d, 1.0f));
  const auto exponent = hn::ShiftLeft<23>(hn::Sub(hn::BitCast(di, t), hn::BitCast(di, round)));
  return hn::BitCast(d, hn::Add(hn::BitCast(di, p), exponent));
}

HWY_INLINE bool FastPathTakes(D d, V x) { return hn::AllTrue(d, hn::Ge(x, hn::Set(d, kFastPathFloor))); }

// e = e^-|x| (floored: above -kFastPathFloor, 1 + e rounds to 1 anyway);
// x >= 0: 1 / (1 + e), x < 0: e / (1 + e), as in SigmoidV.
HWY_INLINE V SigmoidFastV(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  const V e = ExpNonPositiveV(d, hn::Max(hn::Neg(hn::Abs(x)), hn::Set(d, kFastPathFloor)));
  return hn::Div(hn::IfThenElse(hn::Lt(x, hn::Zero(d)), e, one), hn::Add(one, e));
}

HWY_INLINE V SiluFastV(D d, V x) {
  const V e = ExpNonPositiveV(d, hn::Max(hn::Neg(hn::Abs(x)), hn::Set(d, kFastPathFloor)));
  return hn::Div(hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(x, e), x), hn::Add(hn::Set(d, 1.0f), e));
}

// tanh |x| = (1 - e) / (1 + e), e = e^-2|x| (floored as in SigmoidFastV),
// with x's sign; NaN stays NaN. Its error is a few ulp of 1 in absolute
// terms, not relative to a small result (1 - e cancels near 0), so only
// callers that add it to O(1) values use it: the LSTM cell.
HWY_INLINE V TanhAbsoluteV(D d, V x) {
  const V one = hn::Set(d, 1.0f);
  const V e = ExpNonPositiveV(d, hn::Max(hn::Mul(hn::Abs(x), hn::Set(d, -2.0f)), hn::Set(d, kFastPathFloor)));
  const V t = hn::CopySignToAbs(hn::Div(hn::Sub(one, e), hn::Add(one, e)), x);
  return hn::IfThenElse(hn::IsNaN(x), x, t);
}

// One LSTM cell update over `lanes` units at offset j (see LstmCell): the
// fast paths when every sigmoid gate is in their range.
HWY_INLINE void LstmUnits(D d, const float* gates, const float* x, int64_t n, int64_t j, float* c, float* h) {
  const auto pre = [&](int64_t gate) {
    return hn::Add(hn::LoadU(d, gates + gate * n + j), hn::LoadU(d, x + gate * n + j));
  };
  const V pi = pre(0), po = pre(1), pf = pre(2), pg = pre(3);
  const V floor = hn::Set(d, kFastPathFloor);
  V i, o, f, g;
  const bool fast = hn::AllTrue(d, hn::And(hn::And(hn::Ge(pi, floor), hn::Ge(po, floor)), hn::Ge(pf, floor)));
  if (fast) {
    i = SigmoidFastV(d, pi), o = SigmoidFastV(d, po), f = SigmoidFastV(d, pf), g = TanhAbsoluteV(d, pg);
  } else {
    i = SigmoidV(d, pi), o = SigmoidV(d, po), f = SigmoidV(d, pf), g = TanhV(d, pg);
  }
  const V cell = hn::MulAdd(f, hn::LoadU(d, c + j), hn::Mul(i, g));
  hn::StoreU(cell, d, c + j);
  hn::StoreU(hn::Mul(o, fast ? TanhAbsoluteV(d, cell) : TanhV(d, cell)), d, h + j);
}

void LstmCellImpl(const float* gates, const float* x, int64_t n, float* c, float* h) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t j = 0;
  for (; j + lanes <= n; j += lanes) LstmUnits(d, gates, x, n, j, c, h);
  if (j < n) {  // the tail through padded blocks, gate by gate
    const int64_t rest = n - j;
    HWY_ALIGN float g4[4 * 64] = {}, x4[4 * 64] = {}, cb[64] = {}, hb[64];
    for (int gate = 0; gate < 4; ++gate) {
      std::memcpy(g4 + gate * lanes, gates + gate * n + j, rest * sizeof(float));
      std::memcpy(x4 + gate * lanes, x + gate * n + j, rest * sizeof(float));
    }
    std::memcpy(cb, c + j, rest * sizeof(float));
    LstmUnits(d, g4, x4, lanes, 0, cb, hb);
    std::memcpy(c + j, cb, rest * sizeof(float));
    std::memcpy(h + j, hb, rest * sizeof(float));
  }
}

template <bool kRelu>
HWY_INLINE void ScaleShiftRowsT(const float* x, int64_t rows, int64_t n, const float* scale, const float* shift,
                                float* y, int64_t ldy) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const V zero = hn::Zero(d);
  for (int64_t r = 0; r < rows; ++r, x += n, y += ldy) {
    int64_t c = 0;
    for (; c + lanes <= n; c += lanes) {
      V v = hn::MulAdd(hn::LoadU(d, x + c), hn::LoadU(d, scale + c), hn::LoadU(d, shift + c));
      if constexpr (kRelu) v = hn::Max(v, zero);
      hn::StoreU(v, d, y + c);
    }
    for (; c < n; ++c) {
      const float v = x[c] * scale[c] + shift[c];
      y[c] = kRelu ? (v > 0.f ? v : 0.f) : v;
    }
  }
}

// Moves 4-byte values as float vectors: loads and stores carry the bits as
// they are (no arithmetic touches them).
void CopyRows32Impl(const void* src, int64_t rows, int64_t n, void* dst, int64_t ldy) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const float* x = static_cast<const float*>(src);
  float* y = static_cast<float*>(dst);
  for (int64_t r = 0; r < rows; ++r, x += n, y += ldy) {
    int64_t c = 0;
    for (; c + 2 * lanes <= n; c += 2 * lanes) {
      const V a = hn::LoadU(d, x + c), b = hn::LoadU(d, x + c + lanes);
      hn::StoreU(a, d, y + c);
      hn::StoreU(b, d, y + c + lanes);
    }
    for (; c + lanes <= n; c += lanes) hn::StoreU(hn::LoadU(d, x + c), d, y + c);
    if (c < n) std::memcpy(y + c, x + c, (n - c) * sizeof(float));
  }
}

void ScaleShiftRowsImpl(const float* x, int64_t rows, int64_t n, const float* scale, const float* shift, bool relu,
                        float* y, int64_t ldy) {
  if (relu) {
    ScaleShiftRowsT<true>(x, rows, n, scale, shift, y, ldy);
  } else {
    ScaleShiftRowsT<false>(x, rows, n, scale, shift, y, ldy);
  }
}

// c[R, n] = a[R, k] Wᵀ for R rows of a, from the panels of Wᵀ: every panel
// row is loaded once and multiplied into all R rows, VEC vectors of columns
// at a time. One or two rows take eight vectors: eight independent FMA
// chains keep two loads in flight per cycle, where four leave the loop
// waiting on FMA latency.
template <int R, int VEC>
HWY_INLINE void PanelRows(int64_t n, int64_t k, const float* a, int64_t lda, const float* panels, float* c,
                          int64_t ldc) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t step = VEC * lanes;  // divides kPanelColumns: lanes is a power of two <= 16 on x86
  for (int64_t j0 = 0; j0 < n; j0 += kPanelColumns) {
    const float* panel = panels + j0 * k;
    for (int64_t jj = 0; jj < kPanelColumns && j0 + jj < n; jj += step) {
      V acc[R][VEC];
      for (int r = 0; r < R; ++r) {
        for (int q = 0; q < VEC; ++q) acc[r][q] = hn::Zero(d);
      }
      const float* row = panel + jj;
      for (int64_t p = 0; p < k; ++p, row += kPanelColumns) {
        V w[VEC];
        for (int q = 0; q < VEC; ++q) w[q] = hn::LoadU(d, row + q * lanes);
        for (int r = 0; r < R; ++r) {
          const V x = hn::Set(d, a[r * lda + p]);
          for (int q = 0; q < VEC; ++q) acc[r][q] = hn::MulAdd(x, w[q], acc[r][q]);
        }
      }
      const int64_t valid = std::min(step, n - j0 - jj);
      for (int r = 0; r < R; ++r) {
        float* out = c + r * ldc + j0 + jj;
        if (valid == step) {
          for (int q = 0; q < VEC; ++q) hn::StoreU(acc[r][q], d, out + q * lanes);
        } else {  // the padded columns of the last panel stay out of c
          HWY_ALIGN float block[kPanelColumns];
          for (int q = 0; q < VEC; ++q) hn::Store(acc[r][q], d, block + q * lanes);
          std::memcpy(out, block, valid * sizeof(float));
        }
      }
    }
  }
}

void PanelProductImpl(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels, float* c,
                      int64_t ldc) {
  int64_t r = 0;
#if HWY_MAX_BYTES >= 64
  // 32 vector registers: eight rows at two vectors each read every panel row
  // once per eight rows of a, not twice.
  for (; r + 8 <= m; r += 8) PanelRows<8, 2>(n, k, a + r * lda, lda, panels, c + r * ldc, ldc);
#endif
  for (; r + 4 <= m; r += 4) PanelRows<4, 4>(n, k, a + r * lda, lda, panels, c + r * ldc, ldc);
  switch (m - r) {
    case 3: PanelRows<3, 4>(n, k, a + r * lda, lda, panels, c + r * ldc, ldc); break;
    case 2: PanelRows<2, 8>(n, k, a + r * lda, lda, panels, c + r * ldc, ldc); break;
    case 1: PanelRows<1, 8>(n, k, a + r * lda, lda, panels, c + r * ldc, ldc); break;
    default: break;
  }
}

// lo = min(0, x...), hi = max(0, x...); NaNs are skipped (Min/Max keep the
// accumulator when the new lane is NaN).
void RangeWithZeroImpl(const float* x, int64_t n, float* lo, float* hi) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  V vlo = hn::Zero(d), vhi = hn::Zero(d);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const V v = hn::LoadU(d, x + i);
    vlo = hn::Min(v, vlo);
    vhi = hn::Max(v, vhi);
  }
  float l = hn::GetLane(hn::MinOfLanes(d, vlo)), h = hn::GetLane(hn::MaxOfLanes(d, vhi));
  for (; i < n; ++i) {
    l = x[i] < l ? x[i] : l;
    h = x[i] > h ? x[i] : h;
  }
  *lo = l;
  *hi = h;
}

// max(x[0..n)) (n >= 1), NaNs skipped unless all are NaN; and the sum of
// x[0..n) in float over per-lane partial sums.
float MaxValueImpl(const float* x, int64_t n) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  float m = x[0];
  int64_t i = 0;
  if (n >= lanes) {
    V acc = hn::LoadU(d, x);
    for (i = lanes; i + lanes <= n; i += lanes) acc = hn::Max(hn::LoadU(d, x + i), acc);
    m = hn::GetLane(hn::MaxOfLanes(d, acc));
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

float SumImpl(const float* x, int64_t n) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  V acc0 = hn::Zero(d), acc1 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    acc0 = hn::Add(acc0, hn::LoadU(d, x + i));
    acc1 = hn::Add(acc1, hn::LoadU(d, x + i + lanes));
  }
  for (; i + lanes <= n; i += lanes) acc0 = hn::Add(acc0, hn::LoadU(d, x + i));
  float sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(acc0, acc1)));
  for (; i < n; ++i) sum += x[i];
  return sum;
}

// y = softmax(x + add) over one row of n >= 1 (add may be nullptr): the sum,
// the max, the exps with their running sum, and the scaling, each one pass
// over the row (y holds the intermediate values).
void SoftmaxRowImpl(const float* x, const float* add, float* y, int64_t n) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const float* src = x;
  if (add != nullptr) {
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes) hn::StoreU(hn::Add(hn::LoadU(d, x + i), hn::LoadU(d, add + i)), d, y + i);
    for (; i < n; ++i) y[i] = x[i] + add[i];
    src = y;
  }
  const float max = MaxValueImpl(src, n);
  const V shift = hn::Set(d, std::isinf(max) ? 0.f : max);
  V acc = hn::Zero(d);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const V e = ExpV(d, hn::Sub(hn::LoadU(d, src + i), shift));
    hn::StoreU(e, d, y + i);
    acc = hn::Add(acc, e);
  }
  if (i < n) {  // the tail through a padded block; the padding adds nothing
    HWY_ALIGN float block[64] = {};
    std::memcpy(block, src + i, (n - i) * sizeof(float));
    const V e =
        hn::IfThenElseZero(hn::FirstN(d, static_cast<size_t>(n - i)), ExpV(d, hn::Sub(hn::Load(d, block), shift)));
    hn::Store(e, d, block);
    std::memcpy(y + i, block, (n - i) * sizeof(float));
    acc = hn::Add(acc, e);
  }
  const V scale = hn::Set(d, 1.f / hn::GetLane(hn::SumOfLanes(d, acc)));
  for (i = 0; i + lanes <= n; i += lanes) hn::StoreU(hn::Mul(hn::LoadU(d, y + i), scale), d, y + i);
  const float s = hn::GetLane(scale);
  for (; i < n; ++i) y[i] *= s;
}

// y = saturate(round_half_even(x / scale) + zero_point) to [0, 255].
void QuantizeUint8Impl(const float* x, int64_t n, float scale, float zero_point, uint8_t* y) {
  const D d;
  const hn::Rebind<int32_t, D> di;
  const hn::Rebind<uint8_t, D> du8;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const V s = hn::Set(d, scale), z = hn::Set(d, zero_point), top = hn::Set(d, 255.0f);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    V v = hn::Add(hn::Round(hn::Div(hn::LoadU(d, x + i), s)), z);
    v = hn::Min(hn::Max(v, hn::Zero(d)), top);
    hn::StoreU(hn::DemoteTo(du8, hn::ConvertTo(di, v)), du8, y + i);
  }
  for (; i < n; ++i) {
    const float v = std::nearbyint(x[i] / scale) + zero_point;
    y[i] = static_cast<uint8_t>(v < 0.f ? 0.f : (v > 255.f ? 255.f : v));
  }
}

void ExpArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](D d, V v) { return ExpV(d, v); });
}
void LogArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](D d, V v) { return LogV(d, v); });
}
void TanhArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](D d, V v) { return TanhV(d, v); });
}
void SigmoidArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](D d, V v) { return FastPathTakes(d, v) ? SigmoidFastV(d, v) : SigmoidV(d, v); });
}
void ErfArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](D d, V v) { return ErfV(d, v); });
}
void GeluErfArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](D d, V v) { return GeluErfV(d, v); });
}
void GeluTanhArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](D d, V v) { return GeluTanhV(d, v); });
}
void SiluArray(const float* x, float* y, int64_t n) {
  Map(x, y, n, [](D d, V v) { return FastPathTakes(d, v) ? SiluFastV(d, v) : SiluV(d, v); });
}
const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace onyx::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onyx::simd {

HWY_EXPORT(ExpArray);
HWY_EXPORT(LogArray);
HWY_EXPORT(TanhArray);
HWY_EXPORT(SigmoidArray);
HWY_EXPORT(ErfArray);
HWY_EXPORT(GeluErfArray);
HWY_EXPORT(GeluTanhArray);
HWY_EXPORT(SiluArray);
HWY_EXPORT(TargetName);
HWY_EXPORT(PanelProductImpl);
HWY_EXPORT(LstmCellImpl);
HWY_EXPORT(ScaleShiftRowsImpl);
HWY_EXPORT(CopyRows32Impl);
HWY_EXPORT(RangeWithZeroImpl);
HWY_EXPORT(QuantizeUint8Impl);
HWY_EXPORT(MaxValueImpl);
HWY_EXPORT(SumImpl);
HWY_EXPORT(SoftmaxRowImpl);

float MaxValue(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(MaxValueImpl)(x, n); }
float Sum(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumImpl)(x, n); }
void SoftmaxRow(const float* x, const float* add, float* y, int64_t n) {
  HWY_DYNAMIC_DISPATCH(SoftmaxRowImpl)(x, add, y, n);
}

void RangeWithZero(const float* x, int64_t n, float* lo, float* hi) {
  HWY_DYNAMIC_DISPATCH(RangeWithZeroImpl)(x, n, lo, hi);
}

void QuantizeUint8(const float* x, int64_t n, float scale, float zero_point, uint8_t* y) {
  HWY_DYNAMIC_DISPATCH(QuantizeUint8Impl)(x, n, scale, zero_point, y);
}

std::vector<float> PackPanels(const float* w, int64_t n, int64_t k, int64_t ldw) {
  const int64_t panels = (n + kPanelColumns - 1) / kPanelColumns;
  std::vector<float> packed(panels * kPanelColumns * k, 0.f);
  // Panel element (p, q) of panel j0 is W[j0 + q, p]: read W by rows in
  // 32 x 32 tiles, so that both sides stay within a few cache lines.
  constexpr int64_t kTile = 32;
  for (int64_t j0 = 0; j0 < n; j0 += kPanelColumns) {
    float* panel = packed.data() + j0 * k;
    const int64_t cols = std::min(kPanelColumns, n - j0);
    for (int64_t q0 = 0; q0 < cols; q0 += kTile) {
      for (int64_t p0 = 0; p0 < k; p0 += kTile) {
        for (int64_t q = q0; q < std::min(cols, q0 + kTile); ++q) {
          const float* src = w + (j0 + q) * ldw;
          for (int64_t p = p0; p < std::min(k, p0 + kTile); ++p) panel[p * kPanelColumns + q] = src[p];
        }
      }
    }
  }
  return packed;
}

void LstmCell(const float* gates, const float* x, int64_t n, float* c, float* h) {
  HWY_DYNAMIC_DISPATCH(LstmCellImpl)(gates, x, n, c, h);
}

void CopyRows32(const void* x, int64_t rows, int64_t n, void* y, int64_t ldy) {
  HWY_DYNAMIC_DISPATCH(CopyRows32Impl)(x, rows, n, y, ldy);
}

void ScaleShiftRows(const float* x, int64_t rows, int64_t n, const float* scale, const float* shift, bool relu,
                    float* y, int64_t ldy) {
  HWY_DYNAMIC_DISPATCH(ScaleShiftRowsImpl)(x, rows, n, scale, shift, relu, y, ldy);
}

void PanelProduct(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels, float* c,
                  int64_t ldc) {
  HWY_DYNAMIC_DISPATCH(PanelProductImpl)(m, n, k, a, lda, panels, c, ldc);
}

void Exp(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(ExpArray)(x, y, n); }
void Log(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(LogArray)(x, y, n); }
void Tanh(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(TanhArray)(x, y, n); }
void Sigmoid(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(SigmoidArray)(x, y, n); }
void Erf(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(ErfArray)(x, y, n); }
void GeluErf(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(GeluErfArray)(x, y, n); }
void GeluTanh(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(GeluTanhArray)(x, y, n); }
void Silu(const float* x, float* y, int64_t n) { HWY_DYNAMIC_DISPATCH(SiluArray)(x, y, n); }

std::string ActiveTarget() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

std::vector<std::string> RunnableTargets() {
  std::vector<std::string> names;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) names.push_back(hwy::TargetName(target));
  return names;
}

bool ForceTarget(const std::string& name) {
  if (name.empty()) {
    hwy::SetSupportedTargetsForTest(0);
    return true;
  }
  hwy::SetSupportedTargetsForTest(0);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    if (name == hwy::TargetName(target)) {
      hwy::SetSupportedTargetsForTest(target);
      return true;
    }
  }
  return false;
}

}  // namespace onyx::simd
#endif  // HWY_ONCE
