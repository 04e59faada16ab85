// Element-wise float arithmetic and column reductions over rows, at the
// widest SIMD width the CPU runs (the element-wise kernels' own loops are
// compiled for the x86-64 baseline, 4 lanes):
//
//   simd::ArithRows(simd::Arith::kMul, x, c, 1, gate, 0, 1, y, pixels, c);  // y = x * gate
//   simd::AccumulateRows(x, rows, n, ld, /*max=*/false, sums);      // sums += column sums
//   simd::AddClamp(conv, residual, y, n, 0.f, kInf);                 // y = relu(conv + residual)
//
// Results are bit for bit the scalar loop's: each element is one IEEE
// operation (no FMA contraction, a true division).
#pragma once

#include <cstdint>

namespace onyx::simd {

enum class Arith { kAdd, kSub, kMul, kDiv };

// y[r * n + i] = x[r * x_ld + i * x_step] op z[r * z_ld + i * z_step] for
// r < rows, i < n: rows of a broadcast (x_ld or z_ld 0: one row repeated),
// each step 0 (one value repeated along the row: a broadcast scalar or
// channel) or 1. y may be x or z where that advances (in place).
void ArithRows(Arith op, const float* x, int64_t x_ld, int64_t x_step, const float* z, int64_t z_ld, int64_t z_step,
               float* y, int64_t rows, int64_t n);

// acc[c] = acc[c] + x[r * ld + c] (max: max(acc[c], x[r * ld + c]), NaN
// in x skipped as std::max(acc, x) skips it) over rows r < rows, c < n.
void AccumulateRows(const float* x, int64_t rows, int64_t n, int64_t ld, bool max, float* acc);

// y[i] = min(max(x[i] + z[i], lo), hi) for i < n (NaN stays NaN); y may
// be x or z. A residual sum and its Relu / Clip in one pass.
void AddClamp(const float* x, const float* z, float* y, int64_t n, float lo, float hi);

}  // namespace onyx::simd
