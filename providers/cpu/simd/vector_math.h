// Vectorised float32 math over arrays, compiled for every x86 SIMD target
// Highway knows (SSSE3, SSE4, AVX2+FMA, AVX-512) and dispatched once, at first
// use, to the best one the CPU runs; the binary itself stays baseline x86-64.
//
// Each function writes y[i] = f(x[i]) for i < n; x and y may be the same
// array (in place) but must not otherwise overlap. Special values follow
// std:: (NaN in, NaN out; Exp overflows to +inf; Log(0) = -inf, Log(<0) =
// NaN). Accuracy against the exact result, measured over every 251st float
// bit pattern on every target and asserted in vector_math_test.cc (ulp of the
// float result; results below FLT_MIN within FLT_MIN absolute):
//   Exp 1, Log 2, Tanh 3, Sigmoid 3, Erf 3, GeluErf 12 (1 + erf cancels near
//   x = -1.4; below, the bracket is erfc computed directly, where 1 + erf
//   would lose every digit), GeluTanh 4 for x >= -1 and Silu 4 for x >= -20;
//   below those the result is e^u of an argument u rounded to float, so its
//   relative error grows with |u|: GeluTanh 256 ulp, Silu 64 ulp (as in any
//   float evaluation of these formulas).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onyx::simd {

void Exp(const float* x, float* y, int64_t n);
void Log(const float* x, float* y, int64_t n);
void Tanh(const float* x, float* y, int64_t n);
void Sigmoid(const float* x, float* y, int64_t n);  // 1 / (1 + e^-x)
void Erf(const float* x, float* y, int64_t n);
void GeluErf(const float* x, float* y, int64_t n);   // x/2 (1 + erf(x / sqrt 2))
void GeluTanh(const float* x, float* y, int64_t n);  // x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
void Silu(const float* x, float* y, int64_t n);      // x / (1 + e^-x)

// Products of a few rows with a weight matrix kept packed (batch-1 to batch-8
// recurrent steps: LSTM, GRU, RNN). W [n, k] (n rows of k weights, leading
// dimension ldw: a gate block of R) is packed once into column panels of
// kPanelColumns columns of Wᵀ, each panel's k rows contiguous and the last
// padded with zeros, so that a product streams its weights in address order
// (15-20% faster than reading rows of a row-major Wᵀ with a 4 KB stride at
// n = 1024, k = 256). The layout does not depend on the SIMD target.
inline constexpr int64_t kPanelColumns = 128;
std::vector<float> PackPanels(const float* w, int64_t n, int64_t k, int64_t ldw);

// c[m, n] = a[m, k] Wᵀ with `panels` from PackPanels(W, n, k, ...): every
// panel row is loaded once per four rows of a (eight on targets with 32
// vector registers), where a general GEMM's packing costs more than the
// product. Sums in k order with FMA where the target
// has it.
void PanelProduct(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* panels, float* c,
                  int64_t ldc);

// The LSTM cell with ONNX's default activations, no peepholes and no clip,
// for n units: with the gate pre-activations gates + x in i, o, f, c order
// (four blocks of n), c = σ(f) c + σ(i) tanh(c̃) in place and h = σ(o) tanh(c).
// Its tanh is accurate to a few ulp of 1 (absolute, not relative near 0):
// c and h within 4e-6 and 2e-6 of the double equations for |c| <= 4.
void LstmCell(const float* gates, const float* x, int64_t n, float* c, float* h);

// y[r * ldy + c] = x[r * n + c] * scale[c] + shift[c] (then max(., 0) when
// relu) for r < rows, c < n: a per-channel affine of contiguous rows written
// into rows of a wider tensor (ConcatScaleShift). The product and sum are one
// fused multiply-add where the target has it.
void ScaleShiftRows(const float* x, int64_t rows, int64_t n, const float* scale, const float* shift, bool relu,
                    float* y, int64_t ldy);

// Copies `rows` contiguous rows of n 4-byte values (any 4-byte type, bits
// unchanged) into rows ldy values apart: a Concat's short channels-last rows
// without a memcpy call per row.
void CopyRows32(const void* x, int64_t rows, int64_t n, void* y, int64_t ldy);

// Reductions for row-wise kernels (Softmax): the largest of x[0, n), n >= 1
// (NaNs skipped unless every value is NaN), and the sum in float over
// per-lane partial sums (a different order than a sequential loop).
float MaxValue(const float* x, int64_t n);
float Sum(const float* x, int64_t n);

// y = softmax(x + add) over one contiguous row of n >= 1 (add: nullptr for
// none; y may be x but must not otherwise overlap x or add): the max (as
// MaxValue) subtracted before Exp, a row of -inf (fully masked) gives NaN as
// the division 0/0 does, and NaN in x gives a row of NaN.
void SoftmaxRow(const float* x, const float* add, float* y, int64_t n);

// Dynamic uint8 quantization (DynamicQuantizeLinear, DynamicQuantizeMatMul):
// the range of x widened to include 0 (NaNs skipped), and
// y = saturate(round_half_even(x / scale) + zero_point) to [0, 255] with a
// true division, as ONNX defines it.
void RangeWithZero(const float* x, int64_t n, float* lo, float* hi);
void QuantizeUint8(const float* x, int64_t n, float scale, float zero_point, uint8_t* y);

// The SIMD target the functions above run on ("AVX3", "AVX2", "SSE4", ...).
std::string ActiveTarget();

// Every target compiled into the binary that this CPU can run, best first;
// the tests pin each in turn with ForceTarget to check them all.
std::vector<std::string> RunnableTargets();
// Restricts dispatch to the named target from RunnableTargets(); an empty
// name restores the default. Returns false for a name not in the list.
// For tests: not safe while other threads call the functions.
bool ForceTarget(const std::string& name);

}  // namespace onyx::simd
