// RMSNormalization-23 through a session; expected values worked by hand.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatAttr;
using testing::FloatTensor;
using testing::IntAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::Values;

absl::StatusOr<std::vector<Value>> RunRms(const Tensor& x, const Tensor& scale, int64_t axis, float epsilon,
                                          DataType out_type = DataType::kFloat) {
  ModelBuilder m(23);
  std::vector<int64_t> dims(x.dims().begin(), x.dims().end());
  m.Input("x", x.type(), dims).Output("y", out_type, dims);
  m.Initializer("scale", scale);
  auto& n = m.Node("RMSNormalization", {"x", "scale"}, {"y"}, "rms");
  n.add_attribute()->CopyFrom(IntAttr("axis", axis));
  n.add_attribute()->CopyFrom(FloatAttr("epsilon", epsilon));
  return RunModel(m, {{"x", Value(x)}}, {"y"});
}

TEST(RmsNormalizationTest, NormalizesEachRowOverTheLastAxis) {
  // Row [3, 4]: mean of squares 12.5, rms sqrt(12.5); y = x / rms * [1, 2].
  // Row [0, 0] with epsilon 0.25: 0 / 0.5 = 0.
  auto out = RunRms(FloatTensor({2, 2}, {3, 4, 0, 0}), FloatTensor({2}, {1, 2}), -1, 0.25f);
  ASSERT_TRUE(out.ok()) << out.status();
  const float rms = std::sqrt(12.5f + 0.25f);
  const std::vector<float> y = Values<float>((*out)[0]);
  ASSERT_EQ(y.size(), 4u);
  EXPECT_NEAR(y[0], 3 / rms, 1e-6);
  EXPECT_NEAR(y[1], 8 / rms, 1e-6);
  EXPECT_EQ(y[2], 0.f);
  EXPECT_EQ(y[3], 0.f);
}

TEST(RmsNormalizationTest, AxisZeroNormalizesEverything) {
  // Mean of squares of [1, 2, 2, 4] is 25 / 4: rms 2.5 (epsilon 0).
  auto out = RunRms(FloatTensor({2, 2}, {1, 2, 2, 4}), FloatTensor({2, 2}, {1, 1, 1, -1}), 0, 0.f);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0.4f, 0.8f, 0.8f, -1.6f}));
}

TEST(RmsNormalizationTest, ScaleBroadcastsOverTheNormalizedShape) {
  // axis -2 over [2, 2] planes; scale [2, 1] scales the plane's rows.
  // Plane [1, 1, 1, 1]: rms 1, rows scaled by 2 and 3.
  auto out = RunRms(FloatTensor({1, 2, 2}, {1, 1, 1, 1}), FloatTensor({2, 1}, {2, 3}), -2, 0.f);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{2, 2, 3, 3}));
}

TEST(RmsNormalizationTest, Float16ComputesInFloat) {
  // [6, 8]: mean of squares 50 -> rms sqrt(50); 6 / sqrt(50) = 0.8485 and
  // 8 / sqrt(50) = 1.1314, rounded to half.
  Tensor x = Tensor::Allocate(DataType::kFloat16, {2});
  x.mutable_data<uint16_t>()[0] = FloatToHalf(6);
  x.mutable_data<uint16_t>()[1] = FloatToHalf(8);
  Tensor scale = Tensor::Allocate(DataType::kFloat16, {2});
  scale.mutable_data<uint16_t>()[0] = scale.mutable_data<uint16_t>()[1] = FloatToHalf(1);
  auto out = RunRms(x, scale, -1, 0.f, DataType::kFloat16);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<uint16_t> y = Values<uint16_t>((*out)[0]);
  EXPECT_EQ(y[0], FloatToHalf(6 / std::sqrt(50.f)));
  EXPECT_EQ(y[1], FloatToHalf(8 / std::sqrt(50.f)));
}

TEST(RmsNormalizationTest, ScaleThatDoesNotBroadcastIsRefused) {
  auto out = RunRms(FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6}), FloatTensor({2}, {1, 1}), -1, 0.f);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("cannot be broadcast"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace onyx
