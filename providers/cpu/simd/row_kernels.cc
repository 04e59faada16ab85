// Compiled once per SIMD target (foreach_target.h re-includes this file);
// HWY_DYNAMIC_DISPATCH picks the best at the first call.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "providers/cpu/simd/row_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep (must precede highway.h)

#include <algorithm>

#include "hwy/highway.h"
#include "providers/cpu/simd/row_kernels.h"

HWY_BEFORE_NAMESPACE();
namespace onyx::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

template <Arith kOp>
HWY_INLINE V Apply(V a, V b) {
  if constexpr (kOp == Arith::kAdd) return hn::Add(a, b);
  if constexpr (kOp == Arith::kSub) return hn::Sub(a, b);
  if constexpr (kOp == Arith::kMul) return hn::Mul(a, b);
  return hn::Div(a, b);
}

template <Arith kOp>
HWY_INLINE float Apply(float a, float b) {
  if constexpr (kOp == Arith::kAdd) return a + b;
  if constexpr (kOp == Arith::kSub) return a - b;
  if constexpr (kOp == Arith::kMul) return a * b;
  return a / b;
}

// kX, kZ: whether x and z advance along the row (1) or repeat one value (0).
template <Arith kOp, bool kX, bool kZ>
HWY_INLINE void Row(const float* x, const float* z, float* y, int64_t n) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const float x0 = x[0], z0 = z[0];  // read once: y may overwrite them
  const V xs = hn::Set(d, x0), zs = hn::Set(d, z0);
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const V a0 = kX ? hn::LoadU(d, x + i) : xs, a1 = kX ? hn::LoadU(d, x + i + lanes) : xs;
    const V b0 = kZ ? hn::LoadU(d, z + i) : zs, b1 = kZ ? hn::LoadU(d, z + i + lanes) : zs;
    hn::StoreU(Apply<kOp>(a0, b0), d, y + i);
    hn::StoreU(Apply<kOp>(a1, b1), d, y + i + lanes);
  }
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(Apply<kOp>(kX ? hn::LoadU(d, x + i) : xs, kZ ? hn::LoadU(d, z + i) : zs), d, y + i);
  }
  for (; i < n; ++i) y[i] = Apply<kOp>(kX ? x[i] : x0, kZ ? z[i] : z0);
}

template <Arith kOp, bool kX, bool kZ>
HWY_INLINE void Rows(const float* x, int64_t x_ld, const float* z, int64_t z_ld, float* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) Row<kOp, kX, kZ>(x + r * x_ld, z + r * z_ld, y + r * n, n);
}

template <Arith kOp>
HWY_INLINE void RowsFor(const float* x, int64_t x_ld, int64_t x_step, const float* z, int64_t z_ld, int64_t z_step,
                        float* y, int64_t rows, int64_t n) {
  if (x_step != 0 && z_step != 0) {
    Rows<kOp, true, true>(x, x_ld, z, z_ld, y, rows, n);
  } else if (x_step != 0) {
    Rows<kOp, true, false>(x, x_ld, z, z_ld, y, rows, n);
  } else if (z_step != 0) {
    Rows<kOp, false, true>(x, x_ld, z, z_ld, y, rows, n);
  } else {
    Rows<kOp, false, false>(x, x_ld, z, z_ld, y, rows, n);
  }
}

void ArithRowsImpl(Arith op, const float* x, int64_t x_ld, int64_t x_step, const float* z, int64_t z_ld, int64_t z_step,
                   float* y, int64_t rows, int64_t n) {
  if (n <= 0 || rows <= 0) return;
  switch (op) {
    case Arith::kAdd: RowsFor<Arith::kAdd>(x, x_ld, x_step, z, z_ld, z_step, y, rows, n); break;
    case Arith::kSub: RowsFor<Arith::kSub>(x, x_ld, x_step, z, z_ld, z_step, y, rows, n); break;
    case Arith::kMul: RowsFor<Arith::kMul>(x, x_ld, x_step, z, z_ld, z_step, y, rows, n); break;
    case Arith::kDiv: RowsFor<Arith::kDiv>(x, x_ld, x_step, z, z_ld, z_step, y, rows, n); break;
  }
}

template <bool kMax>
HWY_INLINE void Accumulate(const float* x, int64_t rows, int64_t n, int64_t ld, float* acc) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t c = 0;
  // Four vectors of columns per pass over the rows: four independent
  // chains hide the add latency.
  for (; c + 4 * lanes <= n; c += 4 * lanes) {
    V a[4];
    for (int k = 0; k < 4; ++k) a[k] = hn::LoadU(d, acc + c + k * lanes);
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = x + r * ld + c;
      for (int k = 0; k < 4; ++k) {
        const V v = hn::LoadU(d, row + k * lanes);
        // Max(acc, NaN) keeps acc on x86 as std::max(acc, NaN) does; the
        // emulated targets may not, so NaN lanes are masked explicitly.
        a[k] = kMax ? hn::IfThenElse(hn::Gt(v, a[k]), v, a[k]) : hn::Add(a[k], v);
      }
    }
    for (int k = 0; k < 4; ++k) hn::StoreU(a[k], d, acc + c + k * lanes);
  }
  for (; c + lanes <= n; c += lanes) {
    V a = hn::LoadU(d, acc + c);
    for (int64_t r = 0; r < rows; ++r) {
      const V v = hn::LoadU(d, x + r * ld + c);
      a = kMax ? hn::IfThenElse(hn::Gt(v, a), v, a) : hn::Add(a, v);
    }
    hn::StoreU(a, d, acc + c);
  }
  for (; c < n; ++c) {
    float a = acc[c];
    for (int64_t r = 0; r < rows; ++r) a = kMax ? std::max(a, x[r * ld + c]) : a + x[r * ld + c];
    acc[c] = a;
  }
}

void AccumulateRowsImpl(const float* x, int64_t rows, int64_t n, int64_t ld, bool max, float* acc) {
  if (max) {
    Accumulate<true>(x, rows, n, ld, acc);
  } else {
    Accumulate<false>(x, rows, n, ld, acc);
  }
}

void AddClampImpl(const float* x, const float* z, float* y, int64_t n, float lo, float hi) {
  const D d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const V vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  // Compare-and-select rather than Min/Max, whose NaN handling differs
  // between targets: a NaN sum fails both comparisons and stays.
  auto clamp = [&](V v) {
    v = hn::IfThenElse(hn::Lt(v, vlo), vlo, v);
    return hn::IfThenElse(hn::Gt(v, vhi), vhi, v);
  };
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const V a0 = hn::Add(hn::LoadU(d, x + i), hn::LoadU(d, z + i));
    const V a1 = hn::Add(hn::LoadU(d, x + i + lanes), hn::LoadU(d, z + i + lanes));
    hn::StoreU(clamp(a0), d, y + i);
    hn::StoreU(clamp(a1), d, y + i + lanes);
  }
  for (; i + lanes <= n; i += lanes) hn::StoreU(clamp(hn::Add(hn::LoadU(d, x + i), hn::LoadU(d, z + i))), d, y + i);
  for (; i < n; ++i) {
    float v = x[i] + z[i];
    v = v < lo ? lo : v;
    y[i] = v > hi ? hi : v;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace onyx::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onyx::simd {

HWY_EXPORT(ArithRowsImpl);
HWY_EXPORT(AccumulateRowsImpl);
HWY_EXPORT(AddClampImpl);

void ArithRows(Arith op, const float* x, int64_t x_ld, int64_t x_step, const float* z, int64_t z_ld, int64_t z_step,
               float* y, int64_t rows, int64_t n) {
  HWY_DYNAMIC_DISPATCH(ArithRowsImpl)(op, x, x_ld, x_step, z, z_ld, z_step, y, rows, n);
}

void AccumulateRows(const float* x, int64_t rows, int64_t n, int64_t ld, bool max, float* acc) {
  HWY_DYNAMIC_DISPATCH(AccumulateRowsImpl)(x, rows, n, ld, max, acc);
}

void AddClamp(const float* x, const float* z, float* y, int64_t n, float lo, float hi) {
  HWY_DYNAMIC_DISPATCH(AddClampImpl)(x, z, y, n, lo, hi);
}

}  // namespace onyx::simd
#endif  // HWY_ONCE
