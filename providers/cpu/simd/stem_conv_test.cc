// The stem convolution against a double-precision direct loop on every SIMD
// target this CPU runs: the first layers of the common image networks,
// asymmetric and one-sided pads, channel counts that leave a partial vector,
// every in-register activation, and the max pool over its rows.
#include "providers/cpu/simd/stem_conv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "providers/cpu/simd/vector_math.h"

namespace onyx::simd {
namespace {

using Activation = StemConvParams::Activation;

struct Case {
  const char* name;
  int64_t n, c, h, w, m, kh, kw, sh, sw, pt, pl, pb, pr;
  Activation activation = Activation::kNone;
  float alpha = 0.f, beta = 0.f;
};

double Activate(const Case& k, double v) {
  switch (k.activation) {
    case Activation::kNone: return v;
    case Activation::kClamp: return std::min<double>(std::max<double>(v, k.alpha), k.beta);
    case Activation::kLeakyRelu: return v < 0 ? k.alpha * v : v;
    case Activation::kHardSigmoid: return std::min(1.0, std::max(0.0, k.alpha * v + k.beta));
    case Activation::kHardSwish: return v * std::min(1.0, std::max(0.0, v / 6.0 + 0.5));
  }
  return v;
}

class StemConvTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_TRUE(ForceTarget(GetParam())) << GetParam(); }
  void TearDown() override { ForceTarget(""); }
};

TEST_P(StemConvTest, MatchesDoublePrecisionDirectConvolution) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::vector<Case> cases = {
      {"resnet_7x7_s2_p3_relu", 2, 3, 32, 30, 64, 7, 7, 2, 2, 3, 3, 3, 3, Activation::kClamp, 0.f, kInf},
      {"squeezenet_3x3_s2_unpadded", 1, 3, 33, 31, 64, 3, 3, 2, 2, 0, 0, 0, 0, Activation::kClamp, 0.f, kInf},
      {"mobilenet_relu6", 2, 3, 20, 21, 32, 3, 3, 2, 2, 1, 1, 1, 1, Activation::kClamp, 0.f, 6.f},
      {"mobilenetv3_hardswish", 1, 3, 19, 17, 16, 3, 3, 2, 2, 1, 1, 1, 1, Activation::kHardSwish},
      {"shufflenet_24_channels", 1, 3, 18, 18, 24, 3, 3, 2, 2, 1, 1, 1, 1},
      {"convnext_patchify_4x4_s4", 1, 3, 24, 28, 96, 4, 4, 4, 4, 0, 0, 0, 0},
      {"regnet_48_channels_leaky", 1, 3, 15, 15, 48, 3, 3, 2, 2, 1, 1, 1, 1, Activation::kLeakyRelu, 0.1f},
      {"one_channel_hardsigmoid", 1, 1, 12, 40, 20, 5, 5, 1, 1, 2, 2, 2, 2, Activation::kHardSigmoid, 0.2f, 0.5f},
      {"four_channels_odd_pads", 3, 4, 9, 13, 100, 3, 5, 1, 2, 0, 3, 2, 1},
      {"pads_wider_than_input", 1, 2, 3, 2, 8, 3, 3, 1, 1, 2, 2, 2, 2},
      {"one_by_one", 2, 3, 5, 7, 130, 1, 1, 1, 1, 0, 0, 0, 0},
  };
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    const int64_t oh = (k.h + k.pt + k.pb - k.kh) / k.sh + 1, ow = (k.w + k.pl + k.pr - k.kw) / k.sw + 1;
    const int64_t taps = k.c * k.kh * k.kw;
    std::vector<float> x(k.n * k.c * k.h * k.w), w(k.m * taps), b(k.m);
    for (float& v : x) v = uniform(rng);
    for (float& v : w) v = uniform(rng);
    for (float& v : b) v = uniform(rng);
    const std::vector<float> packed = PackStemWeights(w.data(), k.m, taps);
    const std::vector<float> bias = PackStemBias(b.data(), k.m);
    // A guard after y: the last block's padded channels must not be stored.
    std::vector<float> y(k.n * oh * ow * k.m + 64, -7.f);
    StemConvParams p;
    p.x = x.data();
    p.channels = k.c;
    p.height = k.h;
    p.width = k.w;
    p.kernel_h = k.kh;
    p.kernel_w = k.kw;
    p.stride_h = k.sh;
    p.stride_w = k.sw;
    p.pad_top = k.pt;
    p.pad_left = k.pl;
    p.out_h = oh;
    p.out_w = ow;
    p.out_channels = k.m;
    p.packed = packed.data();
    p.bias = bias.data();
    p.activation = k.activation;
    p.alpha = k.alpha;
    p.beta = k.beta;
    // In two calls, as two threads would split the rows.
    const int64_t rows = k.n * oh;
    StemConvRows(p, 0, rows / 2, y.data());
    StemConvRows(p, rows / 2, rows, y.data() + rows / 2 * ow * k.m);
    int64_t checked = 0;
    for (int64_t n = 0; n < k.n; ++n) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          for (int64_t o = 0; o < k.m; ++o) {
            double sum = b[o], magnitude = std::abs(b[o]);
            for (int64_t c = 0; c < k.c; ++c) {
              for (int64_t u = 0; u < k.kh; ++u) {
                for (int64_t v = 0; v < k.kw; ++v) {
                  const int64_t ih = i * k.sh - k.pt + u, iw = j * k.sw - k.pl + v;
                  if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
                  const double term = static_cast<double>(x[((n * k.c + c) * k.h + ih) * k.w + iw]) *
                                      w[((o * k.c + c) * k.kh + u) * k.kw + v];
                  sum += term;
                  magnitude += std::abs(term);
                }
              }
            }
            const float got = y[((n * oh + i) * ow + j) * k.m + o];
            // Recursive summation's bound, (taps + 1) unit roundoffs of the
            // terms' magnitude, plus one rounding of the result.
            ASSERT_NEAR(got, Activate(k, sum), (taps + 2) * 0x1p-24 * (1.0 + magnitude))
                << "n " << n << " oh " << i << " ow " << j << " channel " << o;
            ++checked;
          }
        }
      }
    }
    EXPECT_EQ(checked, k.n * oh * ow * k.m);
    for (size_t i = k.n * oh * ow * k.m; i < y.size(); ++i) ASSERT_EQ(y[i], -7.f) << "wrote past y at " << i;
  }
}

TEST_P(StemConvTest, PackingPadsTheLastBlockWithZeros) {
  // m = 70: one block of 64 and one of 16 (6 real channels); taps = 2.
  std::vector<float> w(70 * 2);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i + 1);
  const std::vector<float> packed = PackStemWeights(w.data(), 70, 2);
  ASSERT_EQ(packed.size(), 80u * 2);
  EXPECT_EQ(packed[0], w[0]);                  // channel 0, tap 0
  EXPECT_EQ(packed[64], w[1]);                 // channel 0, tap 1
  EXPECT_EQ(packed[63], w[63 * 2]);            // channel 63, tap 0
  EXPECT_EQ(packed[128], w[64 * 2]);           // block 2: channel 64, tap 0
  EXPECT_EQ(packed[128 + 16], w[64 * 2 + 1]);  // channel 64, tap 1
  EXPECT_EQ(packed[128 + 5], w[69 * 2]);
  EXPECT_EQ(packed[128 + 6], 0.f);
  EXPECT_EQ(packed[128 + 16 + 15], 0.f);
  const std::vector<float> bias = PackStemBias(nullptr, 70);
  ASSERT_EQ(bias.size(), 80u);
  EXPECT_TRUE(std::all_of(bias.begin(), bias.end(), [](float v) { return v == 0.f; }));
}

TEST_P(StemConvTest, MaxPoolRowTakesTheWindowsInsideTheRows) {
  // 3 rows of 9 pixels; windows of 3 columns at stride 2 with 1 column of
  // padding: columns {0,1}, {1,2,3}, ..., {7,8}; one row missing (a padding
  // row) is simply not passed.
  for (int64_t channels : {1, 19, 64}) {
    SCOPED_TRACE(channels);
    std::mt19937 rng(static_cast<uint32_t>(channels));
    std::uniform_real_distribution<float> uniform(-5.f, 5.f);
    std::vector<std::vector<float>> rows(3, std::vector<float>(9 * channels));
    for (auto& row : rows) {
      for (float& v : row) v = uniform(rng);
    }
    for (int64_t count : {3, 2}) {
      const float* pointers[3] = {rows[0].data(), rows[1].data(), rows[2].data()};
      std::vector<float> out(5 * channels + 8, 99.f);
      MaxPoolRow(pointers, count, 9, channels, 3, 2, 1, 5, out.data());
      for (int64_t x = 0; x < 5; ++x) {
        for (int64_t c = 0; c < channels; ++c) {
          float expected = -std::numeric_limits<float>::infinity();
          for (int64_t r = 0; r < count; ++r) {
            for (int64_t col = std::max<int64_t>(0, 2 * x - 1); col <= std::min<int64_t>(8, 2 * x + 1); ++col) {
              expected = std::max(expected, rows[r][col * channels + c]);
            }
          }
          ASSERT_EQ(out[x * channels + c], expected) << "x " << x << " channel " << c << " rows " << count;
        }
      }
      for (size_t i = 5 * channels; i < out.size(); ++i) ASSERT_EQ(out[i], 99.f);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, StemConvTest, ::testing::ValuesIn(RunnableTargets()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace onyx::simd
