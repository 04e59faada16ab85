// AveragePool-19 (dilations) and LpPool-18 (dilations, ceil_mode) on 1-D
// inputs x = 0, 1, 2, ..., with the windows worked out by hand, and the
// output sizes ONNX Runtime gives where ONNX leaves them open.
#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::StringAttr;
using testing::Values;

struct PoolResult {
  Dims dims;
  std::vector<float> values;
};

absl::StatusOr<PoolResult> RunPool(int opset, const std::string& op, int64_t length,
                                   const std::vector<onnx::AttributeProto>& attrs) {
  std::vector<float> x(length);
  for (int64_t i = 0; i < length; ++i) x[i] = static_cast<float>(i);
  ModelBuilder m(opset);
  m.Input("x", DataType::kFloat, {1, 1, length}).Output("y", DataType::kFloat, {1, 1, -1});
  auto& node = m.Node(op, {"x"}, {"y"});
  for (const auto& a : attrs) *node.add_attribute() = a;
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 1, length}, x))}}, {"y"});
  if (!out.ok()) return out.status();
  return PoolResult{(*out)[0].tensor().dims(), Values<float>((*out)[0])};
}

TEST(PoolTest, AveragePoolDilatedWindows) {
  // Windows {0, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}.
  auto y = RunPool(19, "AveragePool", 7, {IntsAttr("kernel_shape", {2}), IntsAttr("dilations", {2})});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->values, std::vector<float>({1, 2, 3, 4, 5}));
}

TEST(PoolTest, AveragePoolSamePadsIgnoreDilation) {
  // ONNX Runtime sizes SAME_UPPER's pads for the undilated kernel: 7 inputs,
  // kernel 3 -> 2 pads (1 + 1); the dilated window (span 5) then fits 5
  // times. Windows {-1, 1, 3}, {0, 2, 4}, ..., {3, 5, 7}, counting pads.
  auto y = RunPool(19, "AveragePool", 7,
                   {IntsAttr("kernel_shape", {3}), IntsAttr("dilations", {2}), StringAttr("auto_pad", "SAME_UPPER"),
                    IntAttr("count_include_pad", 1)});
  ASSERT_TRUE(y.ok()) << y.status();
  ASSERT_EQ(y->values.size(), 5u);
  const std::vector<float> expected = {4.f / 3, 2, 3, 4, 8.f / 3};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_FLOAT_EQ(y->values[i], expected[i]) << i;
}

TEST(PoolTest, AveragePoolWindowLargerThanInputIsEmpty) {
  // Dilated window span 5 over 4 inputs: (4 - 5) / 1 + 1 = 0 outputs.
  auto y = RunPool(19, "AveragePool", 4, {IntsAttr("kernel_shape", {3}), IntsAttr("dilations", {2})});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->dims, Dims({1, 1, 0}));
}

TEST(PoolTest, LpPoolCeilModeAndDilations) {
  // p = 1, kernel 2, dilation 2, stride 2 over 0..5: ceil((6 - 3) / 2) + 1 =
  // 3 windows {0, 2}, {2, 4}, {4, (6)}; the last one runs past the input.
  auto y = RunPool(18, "LpPool", 6,
                   {IntsAttr("kernel_shape", {2}), IntsAttr("dilations", {2}), IntsAttr("strides", {2}),
                    IntAttr("ceil_mode", 1), IntAttr("p", 1)});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->values, std::vector<float>({2, 6, 4}));
}

}  // namespace
}  // namespace onyx
