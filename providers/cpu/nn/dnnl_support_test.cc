// DnnlEltwise's GELU (the com.onyx Gelu kernel) against the erf form
// computed in double: over [-12, 12] at 2^21 points, the float extremes, and
// in place. The bounds stated in the test are what it enforces: absolute
// error <= 5e-7 on [-12, 12] (the scalar float formula: 4.5e-7), <= 4 ulp
// for x >= 0.5 (measured: 3.7).
#include "providers/cpu/nn/dnnl_support.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace onyx {
namespace {

double GeluReference(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

// Distance in units in the last place of `expected` (as a float).
double Ulps(float got, double expected) {
  const float e = static_cast<float>(expected);
  const float ulp = std::nextafter(std::fabs(e), std::numeric_limits<float>::infinity()) - std::fabs(e);
  return std::fabs(static_cast<double>(got) - expected) / ulp;
}

// GELU = x Phi(x) computed in float has an absolute error floor where
// 1 + erf cancels (x < 0): oneDNN's bound there is absolute, the same order
// as the scalar float formula's, which the test measures alongside. Where
// x >= 0.5 nothing cancels and the error is bounded in ulps.
TEST(DnnlEltwiseTest, GeluErfErrorIsBounded) {
  std::vector<float> x;
  constexpr int kPoints = 1 << 21;
  for (int i = 0; i <= kPoints; ++i) x.push_back(-12.f + 24.f * static_cast<float>(i) / kPoints);
  for (float v : {0.f, -0.f, 1e-30f, -1e-30f, 1e30f, -1e30f, std::numeric_limits<float>::max(),
                  -std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min()}) {
    x.push_back(v);
  }
  std::vector<float> y(x.size());
  ASSERT_TRUE(DnnlEltwise(dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f, x.data(), y.data(), x.size()).ok());
  double worst_abs = 0, scalar_abs = 0, worst_ulps = 0;
  float worst_at = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = GeluReference(x[i]);
    if (std::fabs(x[i]) <= 12.f) {
      worst_abs = std::max(worst_abs, std::fabs(y[i] - ref));
      const float scalar = 0.5f * x[i] * (1.f + std::erf(x[i] * 0.70710678118654752f));
      scalar_abs = std::max(scalar_abs, std::fabs(scalar - ref));
    }
    if (x[i] >= 0.5f && Ulps(y[i], ref) > worst_ulps) {
      worst_ulps = Ulps(y[i], ref);
      worst_at = x[i];
    }
  }
  std::printf("gelu_erf: max absolute error %.3g on [-12, 12] (scalar float formula %.3g); max %.2f ulp for x >= 0.5\n",
              worst_abs, scalar_abs, worst_ulps);
  EXPECT_LE(worst_abs, 5e-7);
  EXPECT_LE(worst_ulps, 4.0) << "at x = " << worst_at;
  // The extremes: GELU(x) = x for large x, 0 for very negative x.
  EXPECT_EQ(y[kPoints + 1 + 4], 1e30f);
  EXPECT_EQ(y[kPoints + 1 + 5], 0.f);
}

TEST(DnnlEltwiseTest, RunsInPlaceAndOnEmptyInput) {
  std::vector<float> v = {-3.f, -1.f, 0.f, 0.5f, 2.f};
  const std::vector<float> x = v;
  ASSERT_TRUE(DnnlEltwise(dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f, v.data(), v.data(), v.size()).ok());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], GeluReference(x[i]), 1e-6) << x[i];
  EXPECT_TRUE(DnnlEltwise(dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f, nullptr, nullptr, 0).ok());
}

}  // namespace
}  // namespace onyx
