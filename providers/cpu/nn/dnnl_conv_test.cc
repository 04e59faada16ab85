// DnnlConvolution against a direct convolution written out in this test (one
// multiply-add per tap, in double), over padded, strided, dilated, grouped and
// depthwise shapes with channel counts that are not multiples of oneDNN's
// block, 1 to 3 spatial dims, and the residual and activation post-ops; the
// 2-D cases again with channels-last activations; which shapes take
// Winograd's algorithm, and that those agree too.
#include "providers/cpu/nn/dnnl_conv.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/parallel_for.h"
#include "gtest/gtest.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace onyx {
namespace {

struct Case {
  const char* name;
  Dims x;  // [N, C, spatial...]
  int64_t out_channels;
  int64_t group;
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  bool bias = true;
  ConvPostOps post_ops;
};

Tensor Random(absl::Span<const int64_t> dims, std::mt19937& rng) {
  Tensor t = Tensor::Allocate(DataType::kFloat, dims);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = u(rng);
  return t;
}

double Activate(const ConvActivation& a, double v) {
  using K = ConvActivation::Kind;
  switch (a.kind) {
    case K::kNone: return v;
    case K::kRelu: return std::max(v, 0.0);
    case K::kLeakyRelu: return v < 0 ? a.alpha * v : v;
    case K::kClip: return std::min<double>(std::max<double>(v, a.alpha), a.beta);
    case K::kSigmoid: return 1.0 / (1.0 + std::exp(-v));
    case K::kHardSigmoid: return std::min(1.0, std::max(0.0, a.alpha * v + a.beta));
    case K::kHardSwish: return v * std::min(1.0, std::max(0.0, v / 6.0 + 0.5));
    case K::kSwish: return v / (1.0 + std::exp(-a.alpha * v));
    case K::kTanh: return std::tanh(v);
  }
  return v;
}

// y[n, m, o...] = act(b[m] + z[n, m, o...] + sum over c in m's group and
// taps k of x[n, c, o * s - p + k * d] * w[m, c, k]).
std::vector<double> DirectConv(const Case& c, const Tensor& x, const Tensor& w, const Tensor* b, const Tensor* z,
                               const Dims& out) {
  const size_t rank = c.kernel.size();
  const int64_t n_batch = c.x[0], in_c = c.x[1], m_out = c.out_channels;
  const int64_t cpg = in_c / c.group, mpg = m_out / c.group;
  int64_t out_size = 1, kernel_size = 1;
  for (size_t d = 0; d < rank; ++d) {
    out_size *= out[2 + d];
    kernel_size *= c.kernel[d];
  }
  std::vector<double> y(n_batch * m_out * out_size);
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t m = 0; m < m_out; ++m) {
      const int64_t g = m / mpg;
      for (int64_t o = 0; o < out_size; ++o) {
        std::vector<int64_t> oi(rank);
        for (int64_t r = o, d = rank - 1; d >= 0; --d) {
          oi[d] = r % out[2 + d];
          r /= out[2 + d];
        }
        double sum = b ? b->data<float>()[m] : 0.0;
        for (int64_t ci = 0; ci < cpg; ++ci) {
          for (int64_t k = 0; k < kernel_size; ++k) {
            std::vector<int64_t> ki(rank);
            for (int64_t r = k, d = rank - 1; d >= 0; --d) {
              ki[d] = r % c.kernel[d];
              r /= c.kernel[d];
            }
            int64_t offset = 0;
            bool inside = true;
            for (size_t d = 0; d < rank; ++d) {
              const int64_t pos = oi[d] * c.strides[d] - c.pads[d] + ki[d] * c.dilations[d];
              inside &= pos >= 0 && pos < c.x[2 + d];
              offset = offset * c.x[2 + d] + pos;
            }
            if (!inside) continue;
            const int64_t channel = g * cpg + ci;
            const double xv = x.data<float>()[(n * in_c + channel) * (x.num_elements() / (n_batch * in_c)) + offset];
            const double wv = w.data<float>()[(m * cpg + ci) * kernel_size + k];
            sum += xv * wv;
          }
        }
        const int64_t yi = (n * m_out + m) * out_size + o;
        if (z) sum += z->data<float>()[yi];
        y[yi] = Activate(c.post_ops.activation, sum);
      }
    }
  }
  return y;
}

ConvAttributes AttrsOf(const Case& c) {
  ConvAttributes attrs;
  attrs.kernel_shape = c.kernel;
  attrs.strides = c.strides;
  attrs.dilations = c.dilations;
  attrs.pads = c.pads;
  return attrs;
}

// max |y - expected| / (1 + |expected|).
double WorstRelativeError(const Tensor& y, const std::vector<double>& expected) {
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    worst = std::max(worst, std::abs(y.data<float>()[i] - expected[i]) / (1.0 + std::abs(expected[i])));
  }
  return worst;
}

// [N, C, H, W] <-> [N, H, W, C] copies, written out here.
Tensor ToChannelsLast(const Tensor& t) {
  const Dims& d = t.dims();
  Tensor out = Tensor::Allocate(DataType::kFloat, {d[0], d[2], d[3], d[1]});
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t h = 0; h < d[2]; ++h)
        for (int64_t w = 0; w < d[3]; ++w)
          out.mutable_data<float>()[((n * d[2] + h) * d[3] + w) * d[1] + c] =
              t.data<float>()[((n * d[1] + c) * d[2] + h) * d[3] + w];
  return out;
}

Tensor ToChannelsFirst(const Tensor& t) {
  const Dims& d = t.dims();  // [N, H, W, C]
  Tensor out = Tensor::Allocate(DataType::kFloat, {d[0], d[3], d[1], d[2]});
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t h = 0; h < d[1]; ++h)
      for (int64_t w = 0; w < d[2]; ++w)
        for (int64_t c = 0; c < d[3]; ++c)
          out.mutable_data<float>()[((n * d[3] + c) * d[1] + h) * d[2] + w] =
              t.data<float>()[((n * d[1] + h) * d[2] + w) * d[3] + c];
  return out;
}

class DnnlConvTest : public ::testing::TestWithParam<Case> {};

TEST_P(DnnlConvTest, MatchesDirectConvolution) {
  const Case& c = GetParam();
  std::mt19937 rng(7);
  Dims w_dims = {c.out_channels, c.x[1] / c.group};
  for (int64_t k : c.kernel) w_dims.push_back(k);
  const Tensor x = Random(c.x, rng), w = Random(w_dims, rng);
  const Tensor b = Random({c.out_channels}, rng);
  const ConvAttributes attrs = AttrsOf(c);
  // Compiled at creation for one case in two, on the first run for the other.
  const Dims known = c.x[0] == 1 ? c.x : Dims{};
  auto conv = DnnlConvolution::Create(attrs, c.group, w, c.bias ? &b : nullptr, c.post_ops, known);
  ASSERT_TRUE(conv.ok()) << conv.status();
  auto out = (*conv)->OutputDims(c.x);
  ASSERT_TRUE(out.ok()) << out.status();
  Tensor y = Tensor::Allocate(DataType::kFloat, *out);
  const Tensor z = Random(*out, rng);
  const Tensor* zp = c.post_ops.residual ? &z : nullptr;
  ASSERT_TRUE((*conv)->Run(x, zp, y).ok());
  const std::vector<double> expected = DirectConv(c, x, w, c.bias ? &b : nullptr, zp, *out);
  ASSERT_EQ(static_cast<int64_t>(expected.size()), y.num_elements());
  EXPECT_LT(WorstRelativeError(y, expected), 1e-5) << c.name;
  // A second run reuses the compiled primitive and gives the same values.
  Tensor again = Tensor::Allocate(DataType::kFloat, *out);
  ASSERT_TRUE((*conv)->Run(x, zp, again).ok());
  EXPECT_TRUE(std::equal(y.data<float>(), y.data<float>() + y.num_elements(), again.data<float>())) << c.name;
}

class DnnlConvChannelsLastTest : public ::testing::TestWithParam<Case> {};

TEST_P(DnnlConvChannelsLastTest, MatchesDirectConvolution) {
  const Case& c = GetParam();
  std::mt19937 rng(11);
  Dims w_dims = {c.out_channels, c.x[1] / c.group, c.kernel[0], c.kernel[1]};
  const Tensor x = Random(c.x, rng), w = Random(w_dims, rng);
  const Tensor b = Random({c.out_channels}, rng);
  const ConvAttributes attrs = AttrsOf(c);
  const Tensor x_last = ToChannelsLast(x);
  const Dims known = c.x[0] == 1 ? x_last.dims() : Dims{};
  auto conv =
      DnnlConvolution::Create(attrs, c.group, w, c.bias ? &b : nullptr, c.post_ops, known, ConvLayout::kChannelsLast);
  ASSERT_TRUE(conv.ok()) << conv.status();
  auto out = (*conv)->OutputDims(x_last.dims());
  ASSERT_TRUE(out.ok()) << out.status();
  const Dims first = {(*out)[0], (*out)[3], (*out)[1], (*out)[2]};
  const Tensor z = Random(first, rng);
  const Tensor z_last = ToChannelsLast(z);
  Tensor y = Tensor::Allocate(DataType::kFloat, *out);
  ASSERT_TRUE((*conv)->Run(x_last, c.post_ops.residual ? &z_last : nullptr, y).ok());
  const Tensor y_first = ToChannelsFirst(y);
  const std::vector<double> expected =
      DirectConv(c, x, w, c.bias ? &b : nullptr, c.post_ops.residual ? &z : nullptr, first);
  ASSERT_EQ(static_cast<int64_t>(expected.size()), y_first.num_elements());
  EXPECT_LT(WorstRelativeError(y_first, expected), 1e-5) << c.name;
}

TEST(DnnlConvErrorTest, ChannelsLastTakesTwoSpatialDims) {
  std::mt19937 rng(3);
  const Tensor w = Random({4, 3, 3}, rng);
  auto conv = DnnlConvolution::Create(ConvAttributes{}, 1, w, nullptr, ConvPostOps{}, {}, ConvLayout::kChannelsLast);
  EXPECT_EQ(conv.status().code(), absl::StatusCode::kInvalidArgument);
  const Tensor w2 = Random({4, 3, 3, 3}, rng);
  auto conv2 = DnnlConvolution::Create(ConvAttributes{}, 1, w2, nullptr, ConvPostOps{}, {}, ConvLayout::kChannelsLast);
  ASSERT_TRUE(conv2.ok()) << conv2.status();
  // [N, H, W, C] with 5 channels against weights for 3.
  EXPECT_EQ((*conv2)->OutputDims(Dims{1, 8, 8, 5}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*(*conv2)->OutputDims(Dims{2, 8, 7, 3}), (Dims{2, 6, 5, 4}));
}

ConvPostOps Post(bool residual, ConvActivation::Kind kind, float alpha = 0, float beta = 0) {
  ConvPostOps p;
  p.residual = residual;
  p.activation = {kind, alpha, beta};
  return p;
}

using K = ConvActivation::Kind;
const Case kCases[] = {
    Case{"plain3x3", {1, 5, 9, 7}, 7, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    Case{"strided_asym_pads", {2, 3, 11, 10}, 17, 1, {3, 2}, {2, 3}, {1, 1}, {0, 1, 2, 0}},
    Case{"dilated", {1, 6, 12, 12}, 5, 1, {3, 3}, {1, 1}, {2, 3}, {2, 3, 2, 3}},
    Case{"grouped", {1, 12, 8, 8}, 18, 3, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    Case{"depthwise", {2, 19, 10, 9}, 19, 19, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
    Case{"depthwise_multiplier", {1, 7, 6, 6}, 14, 7, {5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}},
    Case{"pointwise_no_bias", {1, 33, 5, 5}, 31, 1, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, false},
    Case{"conv1d", {2, 4, 20}, 6, 2, {5}, {2}, {2}, {3, 1}},
    Case{"conv3d", {1, 3, 5, 6, 7}, 4, 1, {3, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 2, 1, 1, 2}},
    Case{"residual_relu", {1, 16, 7, 7}, 16, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Post(true, K::kRelu)},
    Case{"residual_blocked_odd", {2, 9, 6, 5}, 21, 1, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, true, Post(true, K::kNone)},
    Case{
        "leaky_relu", {1, 8, 6, 6}, 8, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Post(false, K::kLeakyRelu, 0.1f)},
    Case{"clip_relu6",
         {1, 24, 6, 6},
         24,
         24,
         {3, 3},
         {1, 1},
         {1, 1},
         {1, 1, 1, 1},
         true,
         Post(false, K::kClip, 0.f, 6.f)},
    Case{"sigmoid", {1, 10, 5, 5}, 3, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Post(false, K::kSigmoid)},
    Case{"hard_sigmoid",
         {1, 10, 5, 5},
         12,
         2,
         {1, 1},
         {1, 1},
         {1, 1},
         {0, 0, 0, 0},
         true,
         Post(false, K::kHardSigmoid, 1.f / 6, 0.5f)},
    Case{"hard_swish", {1, 20, 6, 7}, 20, 20, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Post(false, K::kHardSwish)},
    Case{"swish", {1, 32, 8, 8}, 32, 32, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Post(false, K::kSwish, 1.f)},
    // Swish with beta != 1 stays a oneDNN post-op; Silu (beta 1) and Sigmoid
    // run onyx's vector math after the primitive.
    Case{"swish_beta", {1, 12, 7, 7}, 12, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Post(false, K::kSwish, 1.5f)},
    Case{"tanh", {1, 16, 6, 6}, 16, 16, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, true, Post(true, K::kTanh)},
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }

std::vector<Case> TwoDimensionalCases() {
  std::vector<Case> out;
  for (const Case& c : kCases) {
    if (c.kernel.size() == 2) out.push_back(c);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, DnnlConvTest, ::testing::ValuesIn(kCases), CaseName);
INSTANTIATE_TEST_SUITE_P(Shapes, DnnlConvChannelsLastTest, ::testing::ValuesIn(TwoDimensionalCases()), CaseName);

TEST(DnnlConvErrorTest, MismatchedShapesAreInvalidArgument) {
  std::mt19937 rng(1);
  const Tensor w = Random({4, 3, 3, 3}, rng);
  ConvAttributes attrs;
  auto conv = DnnlConvolution::Create(attrs, 1, w, nullptr, ConvPostOps{}, {});
  ASSERT_TRUE(conv.ok()) << conv.status();
  // 5 input channels against weights for 3.
  auto out = (*conv)->OutputDims(Dims{1, 5, 8, 8});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  const Tensor bias = Random({3}, rng);
  auto bad_bias = DnnlConvolution::Create(attrs, 1, w, &bias, ConvPostOps{}, {});
  EXPECT_EQ(bad_bias.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad_bias.status().message().find("expected 4"), std::string::npos) << bad_bias.status();
}

TEST(DnnlConvErrorTest, ResidualOfTheWrongShapeIsRefused) {
  std::mt19937 rng(2);
  const Tensor w = Random({4, 3, 1, 1}, rng);
  auto conv = DnnlConvolution::Create(ConvAttributes{}, 1, w, nullptr, Post(true, K::kNone), {});
  ASSERT_TRUE(conv.ok()) << conv.status();
  const Tensor x = Random({1, 3, 4, 4}, rng);
  Tensor y = Tensor::Allocate(DataType::kFloat, {1, 4, 4, 4});
  const Tensor z = Random({1, 4, 4, 3}, rng);
  absl::Status status = (*conv)->Run(x, &z, y);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("[1,4,4,3]"), std::string::npos) << status;
}

ConvShape ShapeOf(const Case& c, int64_t group = 1) {
  Dims w = {c.out_channels, c.x[1] / group};
  for (int64_t k : c.kernel) w.push_back(k);
  return *ResolveConvShape(AttrsOf(c), group, c.x, w);
}

// Which convolutions take Winograd's algorithm: 3x3, stride 1, undilated,
// ungrouped, enough channels and work per thread, and (its weights growing
// 4x) enough pixels per image for their weights.
TEST(DnnlConvWinogradTest, PaysOnlyForWideEnoughConvolutionsOnEnoughPixels) {
  const std::vector<int64_t> k3 = {3, 3}, one = {1, 1}, pad1 = {1, 1, 1, 1};
  auto shape = [&](Dims x, int64_t m, std::vector<int64_t> kernel = {3, 3}, std::vector<int64_t> strides = {1, 1},
                   std::vector<int64_t> dilations = {1, 1}, int64_t group = 1) {
    std::vector<int64_t> pads(2 * kernel.size(), kernel[0] / 2 * dilations[0]);
    return ShapeOf(Case{"", x, m, group, kernel, strides, dilations, pads}, group);
  };
  // A ResNet's first two stages: 64 channels on 56x56, 128 on 28x28.
  EXPECT_TRUE(WinogradPays(shape({1, 64, 56, 56}, 64), 1, 1));
  EXPECT_TRUE(WinogradPays(shape({1, 64, 56, 56}, 64), 1, 2));
  EXPECT_TRUE(WinogradPays(shape({1, 128, 28, 28}, 128), 1, 2));
  // 256 on 14x14: 3 extra copies of 256x256x9 weights against 196 pixels of
  // 512 channels is more than 4x.
  EXPECT_FALSE(WinogradPays(shape({8, 256, 14, 14}, 256), 1, 1));
  EXPECT_FALSE(WinogradPays(shape({1, 512, 7, 7}, 512), 1, 1));
  // Too few channels on either side.
  EXPECT_FALSE(WinogradPays(shape({1, 32, 112, 112}, 64), 1, 1));
  EXPECT_FALSE(WinogradPays(shape({1, 128, 56, 56}, 32), 1, 1));
  // 48 x 48 x 9 x 784 = 16.3M multiply-adds: enough for one thread, not two.
  EXPECT_TRUE(WinogradPays(shape({1, 48, 28, 28}, 48), 1, 1));
  EXPECT_FALSE(WinogradPays(shape({1, 48, 28, 28}, 48), 1, 2));
  EXPECT_TRUE(WinogradPays(shape({2, 48, 28, 28}, 48), 1, 2));
  // Not a 3x3, stride-1, undilated, ungrouped convolution.
  EXPECT_FALSE(WinogradPays(shape({1, 64, 56, 56}, 64, {5, 5}), 1, 1));
  EXPECT_FALSE(WinogradPays(shape({1, 64, 56, 56}, 64, k3, {2, 2}), 1, 1));
  EXPECT_FALSE(WinogradPays(shape({1, 64, 56, 56}, 64, k3, one, {2, 2}), 1, 1));
  EXPECT_FALSE(WinogradPays(shape({1, 64, 56, 56}, 64, k3, one, one, 2), 2, 1));
  EXPECT_FALSE(WinogradPays(shape({1, 64, 56, 56, 4}, 64, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}), 1, 1));
}

// Where the CPU has oneDNN's Winograd convolution (AVX-512), shapes it pays
// for run it, through reorders from either layout and with the residual and
// Relu post-ops; pads and post-ops it does not take (asymmetric pads, Clip)
// run directly. Both
// agree with the direct sum: Winograd's transforms round terms up to ~10x
// the inputs' size, so its bound is 1e-4 (direct paths: 1e-5).
TEST(DnnlConvWinogradTest, MatchesDirectConvolution) {
  const ScopedIntraOpThreads one_thread(1);
  const bool has_winograd = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core;
  struct WinogradCase {
    Case c;
    bool runs_winograd;  // on a CPU that has it
  };
  const WinogradCase cases[] = {
      {Case{"winograd_bias", {1, 48, 28, 28}, 48, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}}, true},
      {Case{"winograd_residual_relu",
            {2, 48, 20, 20},
            48,
            1,
            {3, 3},
            {1, 1},
            {1, 1},
            {1, 1, 1, 1},
            true,
            Post(true, K::kRelu)},
       true},
      {Case{"winograd_unpadded_no_bias",
            {1, 48, 32, 28},
            64,
            1,
            {3, 3},
            {1, 1},
            {1, 1},
            {0, 0, 0, 0},
            false,
            Post(false, K::kRelu)},
       true},
      {Case{"clip_direct",
            {1, 48, 28, 28},
            48,
            1,
            {3, 3},
            {1, 1},
            {1, 1},
            {1, 1, 1, 1},
            true,
            Post(false, K::kClip, 0.f, 6.f)},
       false},
      {Case{"asymmetric_pads_direct",
            {1, 48, 30, 27},
            48,
            1,
            {3, 3},
            {1, 1},
            {1, 1},
            {0, 1, 2, 0},
            true,
            Post(false, K::kNone)},
       false},
  };
  for (const auto& [c, runs_winograd] : cases) {
    SCOPED_TRACE(c.name);
    const ConvShape shape = ShapeOf(c);
    ASSERT_TRUE(WinogradPays(shape, 1, 1));
    std::mt19937 rng(5);
    const Tensor x = Random(c.x, rng), w = Random({c.out_channels, c.x[1], 3, 3}, rng);
    const Tensor b = Random({c.out_channels}, rng), z = Random(shape.out_dims, rng);
    const Tensor* zp = c.post_ops.residual ? &z : nullptr;
    const std::vector<double> expected = DirectConv(c, x, w, c.bias ? &b : nullptr, zp, shape.out_dims);
    for (ConvLayout layout : {ConvLayout::kChannelsFirst, ConvLayout::kChannelsLast}) {
      const bool last = layout == ConvLayout::kChannelsLast;
      const Tensor x_in = last ? ToChannelsLast(x) : x, z_in = last ? ToChannelsLast(z) : z;
      auto conv = DnnlConvolution::Create(AttrsOf(c), 1, w, c.bias ? &b : nullptr, c.post_ops, {}, layout);
      ASSERT_TRUE(conv.ok()) << conv.status();
      auto implementation = (*conv)->ImplementationFor(x_in.dims());
      ASSERT_TRUE(implementation.ok()) << implementation.status();
      const bool winograd = implementation->find("wino") != std::string::npos;
      EXPECT_EQ(has_winograd && runs_winograd, winograd) << *implementation;
      auto out = (*conv)->OutputDims(x_in.dims());
      ASSERT_TRUE(out.ok()) << out.status();
      Tensor y = Tensor::Allocate(DataType::kFloat, *out);
      ASSERT_TRUE((*conv)->Run(x_in, zp ? &z_in : nullptr, y).ok());
      EXPECT_LT(WorstRelativeError(last ? ToChannelsFirst(y) : y, expected), winograd ? 1e-4 : 1e-5);
    }
  }
}

TEST(DnnlConvActivationTest, ParsesTheNamesFusionsWrite) {
  EXPECT_EQ(*ParseConvActivation("Relu"), K::kRelu);
  EXPECT_EQ(*ParseConvActivation(""), K::kNone);
  EXPECT_EQ(*ParseConvActivation("Swish"), K::kSwish);
  EXPECT_EQ(*ParseConvActivation("Tanh"), K::kTanh);
  EXPECT_FALSE(ParseConvActivation("Softplus").ok());
}

}  // namespace
}  // namespace onyx
