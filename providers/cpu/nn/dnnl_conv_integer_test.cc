// DnnlIntegerConvolution against the int32 convolution written out here, over
// padded, strided, dilated, grouped and depthwise shapes with odd channel
// counts; uint8 and int8 inputs with a zero point (padding counts as the zero
// point, a real 0), int8 weights with zero point 0 and uint8 weights with 128.
#include "providers/cpu/nn/dnnl_conv_integer.h"

#include <random>

#include "gtest/gtest.h"

namespace onyx {
namespace {

struct Case {
  const char* name;
  Dims x;  // [N, C, H, W]
  int64_t out_channels, group;
  std::vector<int64_t> kernel, strides, dilations, pads;
  DataType x_type, w_type;
  int32_t x_zp;
};

Tensor Random8(DataType type, const Dims& dims, std::mt19937& rng) {
  Tensor t = Tensor::Allocate(type, dims);
  std::uniform_int_distribution<int> u(type == DataType::kUint8 ? 0 : -128, type == DataType::kUint8 ? 255 : 127);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (type == DataType::kUint8) t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(u(rng));
    else t.mutable_data<int8_t>()[i] = static_cast<int8_t>(u(rng));
  }
  return t;
}

int32_t At(const Tensor& t, int64_t i) {
  return t.type() == DataType::kUint8 ? t.data<uint8_t>()[i] : t.data<int8_t>()[i];
}

class DnnlIntegerConvTest : public ::testing::TestWithParam<Case> {};

TEST_P(DnnlIntegerConvTest, MatchesTheInt32Convolution) {
  const Case& c = GetParam();
  std::mt19937 rng(3);
  const int64_t cpg = c.x[1] / c.group, mpg = c.out_channels / c.group;
  const Tensor x = Random8(c.x_type, c.x, rng);
  const Tensor w = Random8(c.w_type, {c.out_channels, cpg, c.kernel[0], c.kernel[1]}, rng);
  const int32_t w_zp = c.w_type == DataType::kUint8 ? 128 : 0;
  Tensor w_zp_t = Tensor::Allocate(c.w_type, {});
  if (c.w_type == DataType::kUint8) w_zp_t.mutable_data<uint8_t>()[0] = 128;
  else w_zp_t.mutable_data<int8_t>()[0] = 0;
  ConvAttributes attrs;
  attrs.kernel_shape = c.kernel;
  attrs.strides = c.strides;
  attrs.dilations = c.dilations;
  attrs.pads = c.pads;
  auto conv = DnnlIntegerConvolution::Create(attrs, c.group, w, &w_zp_t);
  ASSERT_TRUE(conv.ok()) << conv.status();
  auto out = (*conv)->OutputDims(c.x);
  ASSERT_TRUE(out.ok()) << out.status();
  Tensor y = Tensor::Allocate(DataType::kInt32, *out);
  ASSERT_TRUE((*conv)->Run(x, c.x_zp, y).ok());
  const Dims& o = *out;
  int64_t mismatches = 0;
  for (int64_t n = 0; n < o[0]; ++n)
    for (int64_t m = 0; m < o[1]; ++m)
      for (int64_t oh = 0; oh < o[2]; ++oh)
        for (int64_t ow = 0; ow < o[3]; ++ow) {
          int64_t sum = 0;
          const int64_t g = m / mpg;
          for (int64_t ci = 0; ci < cpg; ++ci)
            for (int64_t kh = 0; kh < c.kernel[0]; ++kh)
              for (int64_t kw = 0; kw < c.kernel[1]; ++kw) {
                const int64_t ih = oh * c.strides[0] - c.pads[0] + kh * c.dilations[0];
                const int64_t iw = ow * c.strides[1] - c.pads[1] + kw * c.dilations[1];
                if (ih < 0 || ih >= c.x[2] || iw < 0 || iw >= c.x[3]) continue;
                const int64_t xi = ((n * c.x[1] + g * cpg + ci) * c.x[2] + ih) * c.x[3] + iw;
                const int64_t wi = ((m * cpg + ci) * c.kernel[0] + kh) * c.kernel[1] + kw;
                sum += int64_t{At(x, xi) - c.x_zp} * (At(w, wi) - w_zp);
              }
          const int64_t yi = ((n * o[1] + m) * o[2] + oh) * o[3] + ow;
          mismatches += y.data<int32_t>()[yi] != sum;
        }
  EXPECT_EQ(mismatches, 0) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Shapes, DnnlIntegerConvTest,
                         ::testing::Values(Case{"u8_s8_padded",
                                                {1, 5, 9, 7},
                                                7,
                                                1,
                                                {3, 3},
                                                {1, 1},
                                                {1, 1},
                                                {1, 1, 1, 1},
                                                DataType::kUint8,
                                                DataType::kInt8,
                                                37},
                                           Case{"u8_u8_strided",
                                                {2, 3, 11, 10},
                                                17,
                                                1,
                                                {3, 2},
                                                {2, 3},
                                                {1, 1},
                                                {0, 1, 2, 0},
                                                DataType::kUint8,
                                                DataType::kUint8,
                                                200},
                                           Case{"s8_dilated",
                                                {1, 6, 12, 12},
                                                5,
                                                1,
                                                {3, 3},
                                                {1, 1},
                                                {2, 3},
                                                {2, 3, 2, 3},
                                                DataType::kInt8,
                                                DataType::kInt8,
                                                -9},
                                           Case{"grouped",
                                                {1, 12, 8, 8},
                                                18,
                                                3,
                                                {3, 3},
                                                {1, 1},
                                                {1, 1},
                                                {1, 1, 1, 1},
                                                DataType::kUint8,
                                                DataType::kInt8,
                                                128},
                                           Case{"depthwise",
                                                {2, 19, 10, 9},
                                                19,
                                                19,
                                                {3, 3},
                                                {2, 2},
                                                {1, 1},
                                                {1, 1, 1, 1},
                                                DataType::kUint8,
                                                DataType::kInt8,
                                                5},
                                           Case{"pointwise",
                                                {1, 33, 5, 5},
                                                31,
                                                1,
                                                {1, 1},
                                                {1, 1},
                                                {1, 1},
                                                {0, 0, 0, 0},
                                                DataType::kUint8,
                                                DataType::kInt8,
                                                0}),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST(DnnlIntegerConvErrorTest, WeightZeroPointsOneDnnCannotTakeAreUnimplemented) {
  std::mt19937 rng(4);
  const Tensor w = Random8(DataType::kUint8, {4, 3, 3, 3}, rng);
  Tensor zp = Tensor::Allocate(DataType::kUint8, {});
  zp.mutable_data<uint8_t>()[0] = 3;
  EXPECT_TRUE(absl::IsUnimplemented(DnnlIntegerConvolution::Create(ConvAttributes{}, 1, w, &zp).status()));
  EXPECT_TRUE(absl::IsUnimplemented(DnnlIntegerConvolution::Create(ConvAttributes{}, 1, w, nullptr).status()));
  const Tensor f = Tensor::Allocate(DataType::kFloat, {4, 3, 3, 3});
  EXPECT_TRUE(absl::IsUnimplemented(DnnlIntegerConvolution::Create(ConvAttributes{}, 1, f, nullptr).status()));
}

}  // namespace
}  // namespace onyx
