// The row kernels against scalar loops on every SIMD target this CPU runs:
// bit-identical results (each element one IEEE operation, column sums in
// row order), every step combination and length tail, in place, NaN and
// infinities.
#include "providers/cpu/simd/row_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "providers/cpu/simd/vector_math.h"

namespace onyx::simd {
namespace {

float Scalar(Arith op, float a, float b) {
  switch (op) {
    case Arith::kAdd: return a + b;
    case Arith::kSub: return a - b;
    case Arith::kMul: return a * b;
    case Arith::kDiv: return a / b;
  }
  return 0.f;
}

bool SameBits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof(float)) == 0;
}

class RowKernelsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_TRUE(ForceTarget(GetParam())) << GetParam(); }
  void TearDown() override { ForceTarget(""); }
};

TEST_P(RowKernelsTest, ArithRowEqualsTheScalarLoop) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-100.f, 100.f);
  std::vector<float> x(200), z(200);
  for (float& v : x) v = uniform(rng);
  for (float& v : z) v = uniform(rng);
  const float inf = std::numeric_limits<float>::infinity();
  x[3] = inf;
  x[5] = std::nanf("");
  z[7] = 0.f;
  z[9] = -inf;
  z[0] = 0.f;  // the repeated value of z: x / 0 along a whole row
  for (Arith op : {Arith::kAdd, Arith::kSub, Arith::kMul, Arith::kDiv}) {
    for (int64_t x_step : {0, 1}) {
      for (int64_t z_step : {0, 1}) {
        for (int64_t n : {0, 1, 3, 15, 16, 17, 33, 64, 71, 200}) {
          SCOPED_TRACE(::testing::Message()
                       << "op " << static_cast<int>(op) << " steps " << x_step << z_step << " n " << n);
          std::vector<float> y(n + 1, 42.f);
          ArithRows(op, x.data(), 0, x_step, z.data(), 0, z_step, y.data(), 1, n);
          for (int64_t i = 0; i < n; ++i) {
            const float expected = Scalar(op, x[i * x_step], z[i * z_step]);
            ASSERT_TRUE(SameBits(y[i], expected)) << i << ": " << y[i] << " vs " << expected;
          }
          EXPECT_EQ(y[n], 42.f);
          if (x_step == 0) continue;
          // In place over x.
          std::vector<float> inplace(x.begin(), x.begin() + std::max<int64_t>(n, 1));
          ArithRows(op, inplace.data(), 0, x_step, z.data(), 0, z_step, inplace.data(), 1, n);
          for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(SameBits(inplace[i], y[i])) << i;
        }
      }
    }
  }
}

TEST_P(RowKernelsTest, ArithRowsWalksEachOperandsRows) {
  // 5 rows of 19: x full (rows 23 apart, padding between), z one row of 19
  // repeated (a channels-last tensor times a per-channel gate), then z one
  // value per row (x [5, 19] times z [5, 1]).
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-4.f, 4.f);
  std::vector<float> x(5 * 23), z(19);
  for (float& v : x) v = uniform(rng);
  for (float& v : z) v = uniform(rng);
  std::vector<float> y(5 * 19);
  ArithRows(Arith::kMul, x.data(), 23, 1, z.data(), 0, 1, y.data(), 5, 19);
  for (int64_t r = 0; r < 5; ++r) {
    for (int64_t i = 0; i < 19; ++i) ASSERT_EQ(y[r * 19 + i], x[r * 23 + i] * z[i]) << r << "," << i;
  }
  ArithRows(Arith::kSub, x.data(), 23, 1, z.data(), 1, 0, y.data(), 5, 19);
  for (int64_t r = 0; r < 5; ++r) {
    for (int64_t i = 0; i < 19; ++i) ASSERT_EQ(y[r * 19 + i], x[r * 23 + i] - z[r]) << r << "," << i;
  }
}

TEST_P(RowKernelsTest, AccumulateRowsEqualsTheRowOrderLoop) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-3.f, 3.f);
  for (int64_t n : {1, 7, 16, 64, 70, 131}) {
    for (int64_t rows : {0, 1, 5, 49}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " rows " << rows);
      const int64_t ld = n + 3;
      std::vector<float> x(std::max<int64_t>(rows, 1) * ld);
      for (float& v : x) v = uniform(rng);
      if (rows > 2) {
        x[ld + 0] = std::nanf("");  // skipped by max, spreads through sums
        x[2 * ld + n - 1] = std::numeric_limits<float>::infinity();
      }
      for (bool max : {false, true}) {
        std::vector<float> acc(n), expected(n);
        for (int64_t c = 0; c < n; ++c) acc[c] = expected[c] = uniform(rng);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t c = 0; c < n; ++c) {
            expected[c] = max ? std::max(expected[c], x[r * ld + c]) : expected[c] + x[r * ld + c];
          }
        }
        AccumulateRows(x.data(), rows, n, ld, max, acc.data());
        for (int64_t c = 0; c < n; ++c) {
          ASSERT_TRUE(SameBits(acc[c], expected[c]))
              << (max ? "max" : "sum") << " column " << c << ": " << acc[c] << " vs " << expected[c];
        }
      }
    }
  }
}

TEST_P(RowKernelsTest, AddClampIsTheSumClampedBitForBit) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-4.f, 4.f);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float bounds[][2] = {{-kInf, kInf}, {0.f, kInf}, {0.f, 6.f}, {-1.5f, 0.25f}};
  for (int64_t n : {0, 1, 15, 16, 33, 200}) {
    std::vector<float> x(n), z(n);
    for (float& v : x) v = uniform(rng);
    for (float& v : z) v = uniform(rng);
    if (n > 20) {
      x[3] = std::nanf("");
      x[5] = kInf;
      z[7] = -kInf;
      x[9] = 1e38f, z[9] = 1e38f;  // overflows to +inf, then clamped
    }
    for (const auto& [lo, hi] : bounds) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " [" << lo << ", " << hi << "]");
      std::vector<float> y(n), in_place = x;
      AddClamp(x.data(), z.data(), y.data(), n, lo, hi);
      AddClamp(in_place.data(), z.data(), in_place.data(), n, lo, hi);
      for (int64_t i = 0; i < n; ++i) {
        const float sum = x[i] + z[i];
        const float expected = std::isnan(sum) ? sum : std::min(std::max(sum, lo), hi);
        ASSERT_TRUE(SameBits(y[i], expected)) << i << ": " << y[i] << " vs " << expected;
        ASSERT_TRUE(SameBits(in_place[i], expected)) << "in place " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, RowKernelsTest, ::testing::ValuesIn(RunnableTargets()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onyx::simd
