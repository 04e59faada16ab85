// ScatterElements-18 and ScatterND-18 with the max and min reductions, on
// duplicate indices (each update combines with what earlier ones left).
// Expected values worked by hand; ONNX Runtime 1.30 returns the same.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::StringAttr;
using testing::Values;

absl::StatusOr<std::vector<float>> ScatterElements(const std::string& reduction) {
  ModelBuilder m(18);
  m.Input("d", DataType::kFloat, {2, 5}).Output("y", DataType::kFloat, {2, 5});
  m.Initializer("i", Int64Tensor({2, 3}, {1, 1, 3, 0, -1, 0}));
  m.Initializer("u", FloatTensor({2, 3}, {1.5f, 2.5f, 0.5f, 7, 0, -2}));
  auto& node = m.Node("ScatterElements", {"d", "i", "u"}, {"y"});
  *node.add_attribute() = IntAttr("axis", 1);
  *node.add_attribute() = StringAttr("reduction", reduction);
  auto out = RunModel(m, {{"d", Value(FloatTensor({2, 5}, {1, 2, 3, 4, 5, 5, 4, 3, 2, 1}))}}, {"y"});
  if (!out.ok()) return out.status();
  return Values<float>((*out)[0]);
}

absl::StatusOr<std::vector<float>> ScatterND(const std::string& reduction) {
  ModelBuilder m(18);
  m.Input("d", DataType::kFloat, {4, 2}).Output("y", DataType::kFloat, {4, 2});
  m.Initializer("i", Int64Tensor({3, 1}, {2, 0, 2}));
  m.Initializer("u", FloatTensor({3, 2}, {9, 0, -1, 5, 4, 10}));
  *m.Node("ScatterND", {"d", "i", "u"}, {"y"}).add_attribute() = StringAttr("reduction", reduction);
  auto out = RunModel(m, {{"d", Value(FloatTensor({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}))}}, {"y"});
  if (!out.ok()) return out.status();
  return Values<float>((*out)[0]);
}

TEST(ScatterTest, ElementsMaxAndMin) {
  // Row 0: column 1 sees 1.5 then 2.5 (data 2), column 3 sees 0.5 (data 4).
  // Row 1: column 0 sees 7 then -2 (data 5), column 4 (index -1) sees 0 (data 1).
  auto max = ScatterElements("max");
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(*max, std::vector<float>({1, 2.5f, 3, 4, 5, 7, 4, 3, 2, 1}));
  auto min = ScatterElements("min");
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(*min, std::vector<float>({1, 1.5f, 3, 0.5f, 5, -2, 4, 3, 2, 0}));
}

TEST(ScatterTest, NdMaxAndMin) {
  // Row 2 (data 5, 6) sees (9, 0) then (4, 10); row 0 (data 1, 2) sees (-1, 5).
  auto max = ScatterND("max");
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(*max, std::vector<float>({1, 5, 3, 4, 9, 10, 7, 8}));
  auto min = ScatterND("min");
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_EQ(*min, std::vector<float>({-1, 2, 3, 4, 4, 0, 7, 8}));
}

TEST(ScatterTest, UnknownReductionIsRefused) {
  auto out = ScatterND("mean");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("reduction 'mean'"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace onyx
