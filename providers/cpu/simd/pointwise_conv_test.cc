// The narrow pointwise convolution against a double-precision loop on every
// SIMD target this CPU runs: output channel counts that fill, split or
// leave part of a vector, input channel counts from 1 to MobileNet's 144,
// pixel counts off the tile size, the residual (in place too), the clamp,
// and pixel ranges as threads split them.
#include "providers/cpu/simd/pointwise_conv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "providers/cpu/simd/vector_math.h"

namespace onyx::simd {
namespace {

class PointwiseConvTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_TRUE(ForceTarget(GetParam())) << GetParam(); }
  void TearDown() override { ForceTarget(""); }
};

TEST_P(PointwiseConvTest, MatchesDoublePrecisionLoop) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  struct Clamp {
    float lo, hi;
  };
  for (int64_t m : {1, 4, 8, 15, 16, 17, 24, 31, 32}) {
    for (int64_t c : {1, 3, 32, 144}) {
      for (int64_t pixels : {1, 7, 16, 41}) {
        for (int mode = 0; mode < 3; ++mode) {  // no residual, residual, residual in place
          const Clamp clamp = (m + c + mode) % 3 == 0 ? Clamp{-kInf, kInf}
                              : (m + c) % 3 == 1      ? Clamp{0.f, kInf}
                                                      : Clamp{-0.5f, 0.75f};
          SCOPED_TRACE(::testing::Message() << "m " << m << " c " << c << " pixels " << pixels << " mode " << mode
                                            << " clamp [" << clamp.lo << ", " << clamp.hi << "]");
          std::vector<float> x(pixels * c), w(m * c), b(m), z(pixels * m);
          for (float& v : x) v = uniform(rng);
          for (float& v : w) v = uniform(rng);
          for (float& v : b) v = uniform(rng);
          for (float& v : z) v = uniform(rng);
          const std::vector<float> packed = PackPointwiseWeights(w.data(), m, c, b.data());
          // Guards on both sides of y: only its pixels' channels are written.
          constexpr int64_t kGuard = 40;
          std::vector<float> out(pixels * m + 2 * kGuard, -7.f);
          float* y = out.data() + kGuard;
          std::vector<float> residual = z;
          if (mode == 2) std::copy(z.begin(), z.end(), y);
          PointwiseConvParams p;
          p.x = x.data();
          p.z = mode == 0 ? nullptr : mode == 1 ? residual.data() : y;
          p.y = y;
          p.in_channels = c;
          p.out_channels = m;
          p.packed = packed.data();
          p.lo = clamp.lo;
          p.hi = clamp.hi;
          // As two threads would split the pixels.
          PointwiseConvRows(p, 0, pixels / 3);
          PointwiseConvRows(p, pixels / 3, pixels);
          for (int64_t i = 0; i < pixels; ++i) {
            for (int64_t o = 0; o < m; ++o) {
              double sum = b[o], magnitude = std::abs(b[o]);
              for (int64_t k = 0; k < c; ++k) {
                const double term = static_cast<double>(x[i * c + k]) * w[o * c + k];
                sum += term;
                magnitude += std::abs(term);
              }
              if (mode != 0) {
                sum += z[i * m + o];
                magnitude += std::abs(z[i * m + o]);
              }
              const double expected = std::min<double>(std::max<double>(sum, clamp.lo), clamp.hi);
              // Recursive summation's bound over c + 2 terms, plus one
              // rounding of the result.
              ASSERT_NEAR(y[i * m + o], expected, (c + 3) * 0x1p-24 * (1.0 + magnitude))
                  << "pixel " << i << " channel " << o;
            }
          }
          for (int64_t i = 0; i < kGuard; ++i) {
            ASSERT_EQ(out[i], -7.f) << "wrote before y at " << i;
            ASSERT_EQ(out[kGuard + pixels * m + i], -7.f) << "wrote past y at " << i;
          }
        }
      }
    }
  }
}

TEST_P(PointwiseConvTest, PackingPutsTheBiasFirstAndPadsWithZeros) {
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};  // m = 2, c = 3
  const std::vector<float> b = {-1, -2};
  const std::vector<float> packed = PackPointwiseWeights(w.data(), 2, 3, b.data());
  ASSERT_EQ(packed.size(), 4u * kPointwiseMaxChannels);
  EXPECT_EQ(packed[0], -1.f);
  EXPECT_EQ(packed[1], -2.f);
  EXPECT_EQ(packed[2], 0.f);
  EXPECT_EQ(packed[kPointwiseMaxChannels + 0], 1.f);      // channel 0, input 0
  EXPECT_EQ(packed[kPointwiseMaxChannels + 1], 4.f);      // channel 1, input 0
  EXPECT_EQ(packed[3 * kPointwiseMaxChannels + 1], 6.f);  // channel 1, input 2
  EXPECT_EQ(packed[3 * kPointwiseMaxChannels + 2], 0.f);
  const std::vector<float> no_bias = PackPointwiseWeights(w.data(), 2, 3, nullptr);
  EXPECT_EQ(no_bias[0], 0.f);
}

INSTANTIATE_TEST_SUITE_P(Targets, PointwiseConvTest, ::testing::ValuesIn(RunnableTargets()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onyx::simd
