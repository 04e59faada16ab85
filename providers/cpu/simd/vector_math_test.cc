// Accuracy of the vectorised math against double-precision references, over
// every 251st float bit pattern (17 million values, both signs, subnormals to
// infinities) on every SIMD target this CPU runs; the bounds asserted are the
// ones vector_math.h states.
#include "providers/cpu/simd/vector_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <vector>

namespace onyx::simd {
namespace {

using ArrayFn = void (*)(const float*, float*, int64_t);

struct Case {
  const char* name;
  ArrayFn fn;
  std::function<double(double)> reference;
  double max_ulp;
  // Below tail_below the result is e^u of a rounded argument u (|u| up to
  // 100): tail_ulp there.
  double tail_below = -INFINITY;
  double tail_ulp = 0;
};

double SigmoidRef(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"Exp", Exp, [](double x) { return std::exp(x); }, 1},
      {"Log", Log, [](double x) { return std::log(x); }, 2},
      {"Tanh", Tanh, [](double x) { return std::tanh(x); }, 3},
      {"Sigmoid", Sigmoid, SigmoidRef, 3},
      {"Erf", Erf, [](double x) { return std::erf(x); }, 3},
      {"GeluErf", GeluErf, [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }, 12},
      {"GeluTanh", GeluTanh,
       [](double x) { return x * SigmoidRef(2 * std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)); }, 4, -1, 256},
      {"Silu", Silu, [](double x) { return x * SigmoidRef(x); }, 4, -20, 64},
  };
  return cases;
}

float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// |got - want| in units of the float spacing at want; results below FLT_MIN
// count as exact within FLT_MIN (flush-to-zero territory); -1 = wrong special.
double UlpError(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : -1;
  if (std::isinf(static_cast<float>(want))) {
    return got == static_cast<float>(want) ? 0 : -1;
  }
  if (std::isnan(got) || std::isinf(got)) return -1;
  const double diff = std::fabs(got - want);
  const double magnitude = std::fabs(want);
  if (magnitude < FLT_MIN) return diff <= FLT_MIN ? 0 : diff / 0x1p-149;
  const double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(magnitude)) - 23);
  return diff / ulp;
}

struct Worst {
  double ulp = 0;
  float at = 0;
};

class VectorMathTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_TRUE(ForceTarget(GetParam())) << GetParam(); }
  void TearDown() override { ForceTarget(""); }
};

TEST_P(VectorMathTest, EveryFunctionWithinItsStatedBound) {
  ASSERT_EQ(ActiveTarget(), GetParam());
  constexpr uint32_t kStride = 251;
  constexpr int64_t kBlock = 4096;
  std::vector<float> x(kBlock), y(kBlock);
  for (const Case& c : Cases()) {
    Worst worst, worst_tail;
    int64_t wrong_specials = 0;
    float wrong_at = 0;
    uint64_t bits = 0;
    while (bits <= 0xFFFFFFFFull) {
      int64_t n = 0;
      for (; n < kBlock && bits <= 0xFFFFFFFFull; ++n, bits += kStride) x[n] = FromBits(static_cast<uint32_t>(bits));
      c.fn(x.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double e = UlpError(y[i], c.reference(x[i]));
        if (e < 0) {
          if (wrong_specials++ == 0) wrong_at = x[i];
          continue;
        }
        Worst& w = x[i] < c.tail_below ? worst_tail : worst;
        if (e > w.ulp) w = {e, x[i]};
      }
    }
    std::cout << GetParam() << " " << c.name << ": max " << worst.ulp << " ulp at " << worst.at;
    if (worst_tail.ulp > 0) std::cout << "; below " << c.tail_below << ": " << worst_tail.ulp << " ulp";
    std::cout << "\n";
    EXPECT_EQ(wrong_specials, 0) << c.name << " first wrong special value at x = " << wrong_at;
    EXPECT_LE(worst.ulp, c.max_ulp) << c.name << " at x = " << worst.at;
    EXPECT_LE(worst_tail.ulp, c.tail_ulp) << c.name << " at x = " << worst_tail.at;
  }
}

TEST_P(VectorMathTest, SpecialValuesFollowStd) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {0.f, -0.f, inf, -inf, nan, 89.f, -104.f, 1e-45f};
  std::vector<float> y(x.size());
  Exp(x.data(), y.data(), x.size());
  EXPECT_EQ(y[0], 1.f);
  EXPECT_EQ(y[2], inf);
  EXPECT_EQ(y[3], 0.f);
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_EQ(y[5], inf);
  EXPECT_EQ(y[6], 0.f);
  Log(x.data(), y.data(), x.size());
  EXPECT_EQ(y[0], -inf);
  EXPECT_EQ(y[1], -inf);
  EXPECT_EQ(y[2], inf);
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_NEAR(y[7], std::log(static_cast<double>(1e-45f)), 1e-4);
  for (const Case& c : Cases()) {
    c.fn(x.data(), y.data(), x.size());
    EXPECT_TRUE(std::isnan(y[4])) << c.name << " of NaN";
  }
  Sigmoid(x.data(), y.data(), x.size());
  EXPECT_EQ(y[2], 1.f);
  EXPECT_EQ(y[3], 0.f);
  Erf(x.data(), y.data(), x.size());
  EXPECT_EQ(y[2], 1.f);
  EXPECT_EQ(y[3], -1.f);
  EXPECT_TRUE(std::signbit(y[1]));
}

// Bitwise, so that NaNs (Log of negative inputs) compare equal too; empty
// vectors have no data pointer for memcmp.
bool BitwiseEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Lengths around the vector width and in place: the tail block gives the
// same values as whole vectors.
TEST_P(VectorMathTest, TailsAndInPlaceMatchWholeVectors) {
  for (int64_t n : {0, 1, 3, 7, 8, 15, 16, 17, 33, 100}) {
    std::vector<float> x(n), expected(n), got(n);
    for (int64_t i = 0; i < n; ++i) x[i] = -4.f + 0.37f * i;
    for (const Case& c : Cases()) {
      for (int64_t i = 0; i < n; ++i) c.fn(&x[i], &expected[i], 1);
      c.fn(x.data(), got.data(), n);
      EXPECT_TRUE(BitwiseEqual(got, expected)) << c.name << " n=" << n;
      std::vector<float> inplace = x;
      c.fn(inplace.data(), inplace.data(), n);
      EXPECT_TRUE(BitwiseEqual(inplace, expected)) << c.name << " in place, n=" << n;
    }
  }
}

TEST_P(VectorMathTest, PanelProductMatchesDoubleProducts) {
  for (int64_t m : {1, 2, 3, 4, 5, 8}) {
    for (int64_t n : {1, 7, 16, 33, 100, 128, 129, 1024}) {  // within, at and past a panel's end
      for (int64_t k : {1, 3, 256}) {
        const int64_t lda = k + 1, ldw = k + 3, ldc = n + 2;  // leading dimensions wider than the rows
        std::vector<float> a(m * lda), w(n * ldw), c(m * ldc, -7.f);
        for (size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37 * i);
        for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.11 * i);
        const std::vector<float> panels = PackPanels(w.data(), n, k, ldw);
        ASSERT_EQ(panels.size(), static_cast<size_t>((n + kPanelColumns - 1) / kPanelColumns * kPanelColumns * k));
        PanelProduct(m, n, k, a.data(), lda, panels.data(), c.data(), ldc);
        double worst = 0;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double want = 0, scale = 0;
            for (int64_t p = 0; p < k; ++p) {
              want += double(a[i * lda + p]) * w[j * ldw + p];
              scale += std::fabs(double(a[i * lda + p]) * w[j * ldw + p]);
            }
            worst = std::max(worst, std::fabs(c[i * ldc + j] - want) / std::max(scale, 1e-30));
          }
          for (int64_t j = n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], -7.f) << "wrote past row " << i;
        }
        // Summation error of k float FMAs: k * 2^-24 of the sum of magnitudes.
        EXPECT_LE(worst, k * 0x1p-24) << "m=" << m << " n=" << n << " k=" << k;
      }
    }
  }
}

TEST_P(VectorMathTest, LstmCellMatchesDoubleEquations) {
  for (int64_t n : {1, 5, 16, 33, 130}) {  // whole vectors and tails on every target
    std::vector<float> gates(4 * n), x(4 * n), c(n), h(n, -7.f);
    for (int64_t j = 0; j < 4 * n; ++j) {
      gates[j] = 8.f * std::sin(0.7f * j + n);  // pre-activations over [-12, 12]: saturated and linear parts
      x[j] = 4.f * std::cos(1.3f * j);
    }
    for (int64_t j = 0; j < n; ++j) c[j] = 3.f * std::sin(0.5f * j);
    const std::vector<float> c0 = c;
    LstmCell(gates.data(), x.data(), n, c.data(), h.data());
    auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
    double worst_c = 0, worst_h = 0;
    for (int64_t j = 0; j < n; ++j) {
      const auto pre = [&](int gate) { return double(gates[gate * n + j]) + double(x[gate * n + j]); };
      const double cell = sigmoid(pre(2)) * c0[j] + sigmoid(pre(0)) * std::tanh(pre(3));
      worst_c = std::max(worst_c, std::fabs(c[j] - cell));
      worst_h = std::max(worst_h, std::fabs(h[j] - sigmoid(pre(1)) * std::tanh(cell)));
    }
    // Each σ and tanh is within a few ulp (tested above); |c| <= 4 here.
    EXPECT_LE(worst_c, 4e-6) << "n=" << n;
    EXPECT_LE(worst_h, 2e-6) << "n=" << n;
  }
}

// Rows of several widths (whole vectors and tails) written into a wider
// output: each value x * scale + shift (rounded once or twice: within an ulp
// of the double result), clamped at 0 with relu, and the output's other
// columns untouched.
TEST_P(VectorMathTest, ScaleShiftRowsWritesItsColumnsOnly) {
  for (int64_t n : {1, 5, 16, 33, 130}) {
    for (bool relu : {false, true}) {
      const int64_t rows = 3, ldy = n + 7;
      std::vector<float> x(rows * n), scale(n), shift(n), y(rows * ldy, 42.f);
      for (int64_t j = 0; j < rows * n; ++j) x[j] = 5.f * std::sin(0.9f * j + n);
      for (int64_t c = 0; c < n; ++c) {
        scale[c] = 2.f * std::cos(0.4f * c);
        shift[c] = std::sin(1.7f * c);
      }
      ScaleShiftRows(x.data(), rows, n, scale.data(), shift.data(), relu, y.data(), ldy);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < ldy; ++c) {
          const float got = y[r * ldy + c];
          if (c >= n) {
            ASSERT_EQ(got, 42.f) << "n=" << n << " row " << r << " column " << c << " is not the layer's";
            continue;
          }
          double want = double(x[r * n + c]) * scale[c] + shift[c];
          if (relu) want = std::max(want, 0.0);
          ASSERT_NEAR(got, want, 1e-6 * (1 + std::fabs(want)))
              << "n=" << n << " relu=" << relu << " at " << r << "," << c;
        }
      }
    }
  }
}

// Bits unchanged (integers that read as NaN or subnormal floats included),
// every width, the output's other columns untouched.
TEST_P(VectorMathTest, CopyRows32KeepsEveryBit) {
  for (int64_t n : {1, 5, 16, 33, 130}) {
    const int64_t rows = 3, ldy = n + 5;
    std::vector<uint32_t> x(rows * n), y(rows * ldy, 0xdeadbeefu);
    for (int64_t j = 0; j < rows * n; ++j) x[j] = 0x7f800001u + 2654435761u * static_cast<uint32_t>(j);
    CopyRows32(x.data(), rows, n, y.data(), ldy);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < ldy; ++c) {
        ASSERT_EQ(y[r * ldy + c], c < n ? x[r * n + c] : 0xdeadbeefu) << "n=" << n << " at " << r << "," << c;
      }
    }
  }
}

TEST_P(VectorMathTest, MaxValueAndSumOfRows) {
  for (int64_t n : {1, 2, 7, 16, 17, 33, 197, 1000}) {
    std::vector<float> x(n);
    double want_sum = 0;
    float want_max = -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
      x[i] = std::cos(0.3f * i) * (i % 5 + 1) - 2.f;
      want_sum += x[i];
      want_max = std::max(want_max, x[i]);
    }
    EXPECT_EQ(MaxValue(x.data(), n), want_max) << n;
    EXPECT_NEAR(Sum(x.data(), n), want_sum, 1e-5 * n) << n;
    if (n > 2) {
      x[1] = std::numeric_limits<float>::quiet_NaN();  // skipped by the max
      want_max = -INFINITY;
      for (int64_t i = 0; i < n; ++i) {
        if (i != 1) want_max = std::max(want_max, x[i]);
      }
      EXPECT_EQ(MaxValue(x.data(), n), want_max) << n;
      EXPECT_TRUE(std::isnan(Sum(x.data(), n))) << n;
    }
  }
}

// Against the softmax computed in double; with and without the added row,
// in place, with a fully masked row (NaN, 0/0) and a NaN input.
TEST_P(VectorMathTest, SoftmaxRowMatchesDoubleSoftmax) {
  for (int64_t n : {1, 2, 7, 16, 17, 33, 128, 197}) {
    std::vector<float> x(n), add(n), y(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = 6.f * std::sin(0.7f * i) + 0.5f * (i % 3);
      add[i] = i % 4 == 3 ? -10000.f : 0.25f * (i % 2);
    }
    for (bool with_add : {false, true}) {
      std::vector<double> want(n);
      double max = -INFINITY, sum = 0;
      for (int64_t i = 0; i < n; ++i) max = std::max(max, double(x[i]) + (with_add ? double(add[i]) : 0.0));
      for (int64_t i = 0; i < n; ++i) sum += want[i] = std::exp(double(x[i]) + (with_add ? double(add[i]) : 0.0) - max);
      SoftmaxRow(x.data(), with_add ? add.data() : nullptr, y.data(), n);
      std::vector<float> in_place = x;
      SoftmaxRow(in_place.data(), with_add ? add.data() : nullptr, in_place.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        // x + add and x - max rounded to float, exps of 1 ulp, a float sum
        // of n of them and one scaling: within 16 float ulps.
        EXPECT_NEAR(y[i], want[i] / sum, 2e-6 * (want[i] / sum) + 1e-30) << "n=" << n << " i=" << i << " " << with_add;
        EXPECT_EQ(in_place[i], y[i]) << "n=" << n << " i=" << i;
      }
    }
    std::vector<float> masked(n, -INFINITY);
    SoftmaxRow(masked.data(), nullptr, y.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(std::isnan(y[i])) << "n=" << n << " i=" << i;
    x[n / 2] = std::numeric_limits<float>::quiet_NaN();
    SoftmaxRow(x.data(), nullptr, y.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(std::isnan(y[i])) << "n=" << n << " i=" << i;
  }
}

TEST_P(VectorMathTest, DynamicQuantizationMatchesTheOnnxFormula) {
  for (int64_t n : {0, 1, 5, 16, 33, 1000}) {
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i) x[i] = 3.f * std::sin(0.7f * i) + 0.5f;
    if (n > 3) x[3] = std::numeric_limits<float>::quiet_NaN();  // skipped by the range
    float lo = 1, hi = -1;
    RangeWithZero(x.data(), n, &lo, &hi);
    float want_lo = 0, want_hi = 0;
    for (float v : x) {
      if (!std::isnan(v)) want_lo = std::min(want_lo, v), want_hi = std::max(want_hi, v);
    }
    EXPECT_EQ(lo, want_lo) << n;
    EXPECT_EQ(hi, want_hi) << n;
  }
  // Ties round half to even; values beyond the range saturate at 0 and 255.
  const float scale = 0.5f, zp = 10.f;
  std::vector<float> x = {0.25f, 0.75f, -0.25f, 1.25f, 200.f, -200.f, 3.1f, -4.9f, 0.f};
  for (int i = 0; i < 40; ++i) x.push_back(0.25f * i - 5.f);
  std::vector<uint8_t> y(x.size());
  QuantizeUint8(x.data(), x.size(), scale, zp, y.data());
  for (size_t i = 0; i < x.size(); ++i) {
    const double q = std::nearbyint(static_cast<double>(x[i]) / scale) + zp;  // default mode: half to even
    EXPECT_EQ(y[i], static_cast<uint8_t>(std::clamp(q, 0.0, 255.0))) << "x = " << x[i];
  }
  EXPECT_EQ(y[0], 10);  // 0.5 -> 0 (even)
  EXPECT_EQ(y[1], 12);  // 1.5 -> 2
  EXPECT_EQ(y[2], 10);  // -0.5 -> -0
  EXPECT_EQ(y[3], 12);  // 2.5 -> 2
  EXPECT_EQ(y[4], 255);
  EXPECT_EQ(y[5], 0);
}

INSTANTIATE_TEST_SUITE_P(Targets, VectorMathTest, ::testing::ValuesIn(RunnableTargets()),
                         [](const auto& info) { return info.param; });

TEST(VectorMathDispatchTest, PicksTheBestTargetTheCpuRuns) {
  const std::vector<std::string> targets = RunnableTargets();
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(ActiveTarget(), targets.front());
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_TRUE(ActiveTarget() == "AVX2" || ActiveTarget().rfind("AVX3", 0) == 0) << ActiveTarget();
  }
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl")) {
    EXPECT_EQ(ActiveTarget().rfind("AVX3", 0), 0u) << ActiveTarget();
  }
  EXPECT_FALSE(ForceTarget("NOT_A_TARGET"));
}

}  // namespace
}  // namespace onyx::simd
