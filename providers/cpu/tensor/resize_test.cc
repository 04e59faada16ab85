// Resize-18/19 through a session: antialias, axes, keep_aspect_ratio_policy
// and half_pixel_symmetric. Expected values are ONNX Runtime 1.30's for the
// same models; one antialiased output is also worked by hand.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::StringAttr;
using testing::Values;

struct ResizeCase {
  std::vector<int64_t> dims;
  std::vector<float> scales;   // none when empty
  std::vector<int64_t> sizes;  // none when empty
  std::vector<onnx::AttributeProto> attrs;
  int64_t opset = 18;
  DataType type = DataType::kFloat;
};

// Resizes iota(dims) + 1 (or `x` when given).
absl::StatusOr<Value> RunResize(const ResizeCase& c, const Tensor* x = nullptr) {
  ModelBuilder m(c.opset);
  m.Input("x", c.type, c.dims).Output("y", c.type, std::vector<int64_t>(c.dims.size(), -1));
  std::vector<std::string> inputs = {"x", "", ""};
  if (!c.scales.empty()) {
    m.Initializer("scales", FloatTensor({static_cast<int64_t>(c.scales.size())}, c.scales));
    inputs[2] = "scales";
  }
  if (!c.sizes.empty()) {
    m.Initializer("sizes", Int64Tensor({static_cast<int64_t>(c.sizes.size())}, c.sizes));
    inputs.push_back("sizes");
  }
  auto& node = m.Node("Resize", inputs, {"y"}, "resize");
  for (const auto& a : c.attrs) *node.add_attribute() = a;
  int64_t count = 1;
  for (int64_t d : c.dims) count *= d;
  std::vector<float> iota(count);
  for (int64_t i = 0; i < count; ++i) iota[i] = static_cast<float>(i + 1);
  auto out = RunModel(m, {{"x", Value(x != nullptr ? *x : FloatTensor(c.dims, iota))}}, {"y"});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

void ExpectNear(const Value& y, const Dims& dims, const std::vector<float>& expected) {
  EXPECT_EQ(y.tensor().dims(), dims);
  const std::vector<float> got = Values<float>(y);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 2e-5) << "at " << i;
}

TEST(ResizeTest, AntialiasLinearStretchesTheFilter) {
  // [1..8] to 3 (scale 0.375): the triangle filter widens to 8/3. Output 0
  // sits at 0.8333; its taps -1..3 weigh 0.3125, 0.6875, 0.9375, 0.5625,
  // 0.1875 (sum 2.6875), and the tap at -1 folds onto element 0:
  // (1 * 1 + 2 * 0.9375 + 3 * 0.5625 + 4 * 0.1875) / 2.6875 = 1.976744.
  auto y = RunResize({{1, 8}, {1, 0.375f}, {}, {StringAttr("mode", "linear"), IntAttr("antialias", 1)}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectNear(*y, {1, 3}, {1.976744f, 4.5f, 7.023255f});
}

TEST(ResizeTest, AntialiasLinearTwoAxes) {
  auto y = RunResize({{1, 1, 4, 4}, {1, 1, 0.5f, 0.5f}, {}, {StringAttr("mode", "linear"), IntAttr("antialias", 1)}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectNear(*y, {1, 1, 2, 2}, {4.125f, 5.875f, 11.125f, 12.875f});
}

TEST(ResizeTest, AntialiasCubicWithSizes) {
  auto y = RunResize({{1, 1, 4, 4}, {}, {1, 1, 3, 3}, {StringAttr("mode", "cubic"), IntAttr("antialias", 1)}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectNear(*y, {1, 1, 3, 3},
             {1.775009f, 3.120008f, 4.465006f, 7.155003f, 8.5f, 9.845001f, 12.534997f, 13.879994f, 15.224995f});
}

TEST(ResizeTest, AntialiasCubicExcludeOutside) {
  auto y = RunResize(
      {{1, 8}, {1, 0.375f}, {}, {StringAttr("mode", "cubic"), IntAttr("antialias", 1), IntAttr("exclude_outside", 1)}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectNear(*y, {1, 3}, {1.843784f, 4.500001f, 7.156215f});
}

TEST(ResizeTest, AntialiasUint8RoundsLikeOnnxRuntime) {
  const std::vector<uint8_t> values = {0, 255, 0, 255, 10, 200, 30, 90, 255, 0, 7};
  Tensor x = testing::TypedTensor<uint8_t>(DataType::kUint8, {1, 11}, values);
  auto y = RunResize(
      {{1, 11}, {1, 0.3f}, {}, {StringAttr("mode", "linear"), IntAttr("antialias", 1)}, 18, DataType::kUint8}, &x);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values<uint8_t>(*y), std::vector<uint8_t>({107, 108, 106}));
}

TEST(ResizeTest, NotLargerKeepsTheAspectRatio) {
  // 3x4 into at most 2x2: one factor min(2/3, 2/4) = 0.5, sizes 2x2.
  auto y = RunResize(
      {{1, 1, 3, 4},
       {},
       {2, 2},
       {StringAttr("mode", "linear"), IntsAttr("axes", {2, 3}), StringAttr("keep_aspect_ratio_policy", "not_larger")}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectNear(*y, {1, 1, 2, 2}, {3.5f, 5.5f, 9.5f, 11.5f});
}

TEST(ResizeTest, NotSmallerKeepsTheAspectRatio) {
  // 3x4 into at least 2x2: factor max(2/3, 2/4), sizes 2 x round(2.67) = 3.
  auto y = RunResize(
      {{1, 1, 3, 4}, {}, {2, 2}, {IntsAttr("axes", {2, 3}), StringAttr("keep_aspect_ratio_policy", "not_smaller")}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectNear(*y, {1, 1, 2, 3}, {1, 3, 4, 9, 11, 12});
}

TEST(ResizeTest, AxesNameTheScaledAxes) {
  // Scale 2 on the last axis only, named as 3 and as -1 (ONNX Runtime
  // mishandles negative axes; the spec allows them).
  for (int64_t axis : {3, -1}) {
    auto y = RunResize({{1, 1, 3, 4}, {2.0f}, {}, {IntsAttr("axes", {axis})}});
    ASSERT_TRUE(y.ok()) << y.status();
    std::vector<float> expected;
    for (int i = 1; i <= 12; ++i) expected.insert(expected.end(), {float(i), float(i)});
    ExpectNear(*y, {1, 1, 3, 8}, expected);
  }
}

TEST(ResizeTest, HalfPixelSymmetricCentresTheRoundedOutput) {
  // 5 * 0.7 = 3.5 rounds down to 3: half_pixel_symmetric shifts by
  // 2.5 * (1 - 3 / 3.5) = 0.357 where half_pixel does not.
  auto y =
      RunResize({{1, 5},
                 {1, 0.7f},
                 {},
                 {StringAttr("mode", "linear"), StringAttr("coordinate_transformation_mode", "half_pixel_symmetric")},
                 19});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectNear(*y, {1, 3}, {1.571429f, 3.0f, 4.428572f});
}

TEST(ResizeTest, BadAxesOrCountsAreRefused) {
  for (const auto& [c, message] : std::vector<std::pair<ResizeCase, std::string>>{
           {{{1, 1, 3, 4}, {2.0f, 2.0f}, {}, {IntsAttr("axes", {3, -1})}}, "more than once"},
           {{{1, 1, 3, 4}, {}, {2, 2, 2}, {IntsAttr("axes", {2, 3})}}, "expected the 2 axes"},
           {{{1, 1, 3, 4}, {2.0f}, {}, {IntsAttr("axes", {4})}}, "out of range"}}) {
    auto y = RunResize(c);
    ASSERT_FALSE(y.ok()) << message;
    EXPECT_NE(y.status().message().find(message), std::string::npos) << y.status();
  }
}

}  // namespace
}  // namespace onyx
