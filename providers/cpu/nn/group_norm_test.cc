// GroupNormalization-18 (scale and bias per group) and -21 (per channel) on
// values worked out by hand, with epsilon 0 so that the statistics are exact.
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

absl::StatusOr<std::vector<float>> RunGroupNorm(int opset, const std::vector<float>& scale,
                                                const std::vector<float>& bias) {
  // X = [1, 3 | 2, 6] in two groups of two channels (one element each):
  // group 0 has mean 2 and variance 1, group 1 mean 4 and variance 4, so the
  // normalised values are [-1, 1 | -1, 1].
  ModelBuilder m(opset);
  m.Input("x", DataType::kFloat, {1, 4, 1}).Output("y", DataType::kFloat, {1, 4, 1});
  const int64_t n = static_cast<int64_t>(scale.size());
  m.Initializer("s", FloatTensor({n}, scale));
  m.Initializer("b", FloatTensor({n}, bias));
  auto& node = m.Node("GroupNormalization", {"x", "s", "b"}, {"y"});
  *node.add_attribute() = IntAttr("num_groups", 2);
  *node.add_attribute() = FloatAttr("epsilon", 0.f);
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 4, 1}, {1, 3, 2, 6}))}}, {"y"});
  if (!out.ok()) return out.status();
  return Values<float>((*out)[0]);
}

TEST(GroupNormTest, Opset18ScalesPerGroup) {
  // [-1, 1] * 2 + 10 and [-1, 1] * 3 + 20.
  auto y = RunGroupNorm(18, {2, 3}, {10, 20});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, std::vector<float>({8, 12, 17, 23}));
}

TEST(GroupNormTest, Opset21ScalesPerChannel) {
  // -1 * 1, 1 * 2, -1 * 3, 1 * 4 + 10.
  auto y = RunGroupNorm(21, {1, 2, 3, 4}, {0, 0, 0, 10});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, std::vector<float>({-1, 2, -3, 14}));
}

TEST(GroupNormTest, SingleScaleBroadcasts) {
  auto y = RunGroupNorm(21, {2}, {1});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, std::vector<float>({-1, 3, -1, 3}));
}

TEST(GroupNormTest, Opset18RejectsPerChannelScale) {
  auto y = RunGroupNorm(18, {1, 2, 3, 4}, {0, 0, 0, 0});
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(y.status().message().find("one per group"), std::string::npos) << y.status();
}

}  // namespace
}  // namespace onyx
