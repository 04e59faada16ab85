// DeformConv-19 on small inputs worked out by hand: zero offsets reduce it
// to Conv; fractional offsets interpolate (zeros outside X); the mask scales
// each tap; offset groups move their channels independently.
#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::IntAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::Values;

struct Input {
  std::string name;
  std::vector<int64_t> dims;
  std::vector<float> values;
};

absl::StatusOr<std::vector<float>> RunDeformConv(const std::vector<Input>& inputs, const std::vector<int64_t>& y_dims,
                                                 int64_t offset_group = 1) {
  ModelBuilder m(19);
  std::vector<std::string> names;
  Feeds feeds;
  for (const Input& in : inputs) {
    names.push_back(in.name);
    if (in.name.empty()) continue;
    m.Input(in.name, DataType::kFloat, in.dims);
    feeds.emplace_back(in.name, Value(FloatTensor(in.dims, in.values)));
  }
  m.Output("y", DataType::kFloat, y_dims);
  *m.Node("DeformConv", names, {"y"}).add_attribute() = IntAttr("offset_group", offset_group);
  auto out = RunModel(m, feeds, {"y"});
  if (!out.ok()) return out.status();
  return Values<float>((*out)[0]);
}

const Input kX3x3{"x", {1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8}};

TEST(DeformConvTest, ZeroOffsetsAreAConvolution) {
  // 2x2 windows of ones over 0..8: 0+1+3+4, 1+2+4+5, 3+4+6+7, 4+5+7+8.
  auto y = RunDeformConv({kX3x3, {"w", {1, 1, 2, 2}, {1, 1, 1, 1}}, {"o", {1, 8, 2, 2}, std::vector<float>(32, 0)}},
                         {1, 1, 2, 2});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, std::vector<float>({8, 12, 20, 24}));
}

TEST(DeformConvTest, FractionalOffsetsInterpolateWithZerosOutside) {
  // 1x1 kernel, dx = 0.5 everywhere over [[0, 1, 2], [3, 4, 5]]: halfway to
  // the right neighbour, which is 0 past the last column (2 / 2, 5 / 2).
  std::vector<float> offsets(12, 0);
  for (int i = 6; i < 12; ++i) offsets[i] = 0.5f;  // channel 1 is dx
  auto y = RunDeformConv(
      {{"x", {1, 1, 2, 3}, {0, 1, 2, 3, 4, 5}}, {"w", {1, 1, 1, 1}, {1}}, {"o", {1, 2, 2, 3}, offsets}}, {1, 1, 2, 3});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, std::vector<float>({0.5f, 1.5f, 1, 3.5f, 4.5f, 2.5f}));
}

TEST(DeformConvTest, MaskScalesTapsAndBiasAdds) {
  // The first case with every tap weighted 0.5, plus bias 1.
  auto y = RunDeformConv({kX3x3,
                          {"w", {1, 1, 2, 2}, {1, 1, 1, 1}},
                          {"o", {1, 8, 2, 2}, std::vector<float>(32, 0)},
                          {"b", {1}, {1}},
                          {"m", {1, 4, 2, 2}, std::vector<float>(16, 0.5f)}},
                         {1, 1, 2, 2});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, std::vector<float>({5, 7, 11, 13}));
}

TEST(DeformConvTest, OffsetGroupsMoveTheirOwnChannels) {
  // Channel 0 stays ([1, 2], [3, 4]); channel 1 ([10, 20], [30, 40]) reads
  // one row down (dy = 1), so its second row is outside: y = c0 + c1'.
  std::vector<float> offsets(16, 0);
  for (int i = 8; i < 12; ++i) offsets[i] = 1;  // group 1's dy
  auto y = RunDeformConv(
      {{"x", {1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40}}, {"w", {1, 2, 1, 1}, {1, 1}}, {"o", {1, 4, 2, 2}, offsets}},
      {1, 1, 2, 2}, 2);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, std::vector<float>({31, 42, 3, 4}));
}

TEST(DeformConvTest, WrongOffsetShapeNamesTheExpectedOne) {
  auto y = RunDeformConv({kX3x3, {"w", {1, 1, 2, 2}, {1, 1, 1, 1}}, {"o", {1, 6, 2, 2}, std::vector<float>(24, 0)}},
                         {1, 1, 2, 2});
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().message().find("offset must be [1,8,2,2]"), std::string::npos) << y.status();
}

}  // namespace
}  // namespace onyx
