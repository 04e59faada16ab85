// Col2Im-18 through a session: overlapping blocks sum, and dilations, pads
// and strides place them. The 1-D case is worked by hand (ONNX Runtime 1.30
// mixes channels there); the 2-D case's values are ONNX Runtime's.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::Values;

struct Col2ImCase {
  std::vector<int64_t> input_dims, image, block, dilations, pads, strides;
};

// Runs Col2Im on iota(input_dims).
absl::StatusOr<Value> RunCol2Im(const Col2ImCase& c) {
  ModelBuilder m(18);
  std::vector<int64_t> out = {c.input_dims[0], -1};
  out.insert(out.end(), c.image.begin(), c.image.end());
  m.Input("x", DataType::kFloat, c.input_dims).Output("y", DataType::kFloat, out);
  m.Initializer("image", Int64Tensor({static_cast<int64_t>(c.image.size())}, c.image));
  m.Initializer("block", Int64Tensor({static_cast<int64_t>(c.block.size())}, c.block));
  auto& node = m.Node("Col2Im", {"x", "image", "block"}, {"y"}, "col2im");
  if (!c.dilations.empty()) *node.add_attribute() = IntsAttr("dilations", c.dilations);
  if (!c.pads.empty()) *node.add_attribute() = IntsAttr("pads", c.pads);
  if (!c.strides.empty()) *node.add_attribute() = IntsAttr("strides", c.strides);
  int64_t count = 1;
  for (int64_t d : c.input_dims) count *= d;
  std::vector<float> x(count);
  for (int64_t i = 0; i < count; ++i) x[i] = static_cast<float>(i);
  auto result = RunModel(m, {{"x", Value(FloatTensor(c.input_dims, x))}}, {"y"});
  if (!result.ok()) return result.status();
  return (*result)[0];
}

TEST(Col2ImTest, OverlappingBlocksSum) {
  // Image 4, block 2: 3 positions. Row 0 (offset 0) = [0, 1, 2] lands at
  // 0, 1, 2; row 1 (offset 1) = [3, 4, 5] at 1, 2, 3: [0, 1 + 3, 2 + 4, 5].
  auto y = RunCol2Im({{1, 2, 3}, {4}, {2}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->tensor().dims(), Dims({1, 1, 4}));
  EXPECT_EQ(Values<float>(*y), std::vector<float>({0, 4, 6, 5}));
}

TEST(Col2ImTest, DilationPadsAndStrideOneDimensionTwoChannels) {
  // Image 7, block 3, dilation 2, pads (1, 1), stride 2: (7 + 2 - 5) / 2 + 1
  // = 3 positions; position c, offset b lands at 2c - 1 + 2b (dropped
  // outside [0, 7)). Channel 0 rows r0 = [0,1,2], r1 = [3,4,5], r2 = [6,7,8]:
  // out[1] = r1[0] + r0[1] = 4, out[3] = r2[0] + r1[1] + r0[2] = 12,
  // out[5] = r2[1] + r1[2] = 12. Channel 1 adds 9 to every row value.
  auto y = RunCol2Im({{1, 6, 3}, {7}, {3}, {2}, {1, 1}, {2}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->tensor().dims(), Dims({1, 2, 7}));
  EXPECT_EQ(Values<float>(*y), std::vector<float>({0, 4, 0, 12, 0, 12, 0, 0, 22, 0, 39, 0, 30, 0}));
}

TEST(Col2ImTest, TwoDimensionsWithDilationPadsAndStrides) {
  auto y = RunCol2Im({{1, 8, 6}, {4, 5}, {2, 2}, {2, 1}, {1, 0, 0, 1}, {2, 2}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->tensor().dims(), Dims({1, 2, 4, 5}));
  EXPECT_EQ(Values<float>(*y),
            std::vector<float>({0, 0, 0, 0, 0, 15, 27, 17, 29, 19, 0, 0, 0, 0, 0, 15, 21, 16, 22, 17,
                                0, 0, 0, 0, 0, 63, 75, 65, 77, 67, 0, 0, 0, 0, 0, 39, 45, 40, 46, 41}));
}

TEST(Col2ImTest, MismatchedColumnCountIsRefused) {
  auto y = RunCol2Im({{1, 2, 4}, {4}, {2}});
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().message().find("must be [N, C * 2, 3]"), std::string::npos) << y.status();
}

}  // namespace
}  // namespace onyx
