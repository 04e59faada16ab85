// DFT-20 through a session: the axis input (default -2), onesided real
// transforms and the inverse one-sided transform. Expected values from
// numpy.fft (rfft, ifft, irfft) on the same signals.
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
using testing::Values;

void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], 1e-5) << i;
}

TEST(SignalTest, Dft20OneSidedAlongTheDefaultAxisWithPadding) {
  // rfft([1, 2, 0, -1], n=6) = [2, 3 - 1.7320508i, -1 - 1.7320508i, 0].
  ModelBuilder m(20);
  m.Input("x", DataType::kFloat, {1, 4, 1}).Output("y", DataType::kFloat, {1, 4, 2});
  m.Initializer("n", Int64Tensor({}, {6}));
  m.Node("DFT", {"x", "n"}, {"y"}, "dft").add_attribute()->CopyFrom(IntAttr("onesided", 1));
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 4, 1}, {1, 2, 0, -1}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {2, 0, 3, -1.7320508f, -1, -1.7320508f, 0, 0});
}

TEST(SignalTest, Dft20InverseAlongAnAxisInput) {
  // ifft over axis 0 of [[1+i, 0, 2], [0, i, -1]]:
  // [[0.5+0.5i, 0.5i, 0.5], [0.5+0.5i, -0.5i, 1.5]].
  ModelBuilder m(20);
  m.Input("x", DataType::kFloat, {2, 3, 2}).Output("y", DataType::kFloat, {2, 3, 2});
  m.Initializer("axis", Int64Tensor({}, {0}));
  m.Node("DFT", {"x", "", "axis"}, {"y"}, "dft").add_attribute()->CopyFrom(IntAttr("inverse", 1));
  Tensor x = FloatTensor({2, 3, 2}, {1, 1, 0, 0, 2, 0, 0, 0, 0, 1, -1, 0});
  auto out = RunModel(m, {{"x", Value(x)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {0.5f, 0.5f, 0, 0.5f, 0.5f, 0, 0.5f, 0.5f, 0, -0.5f, 1.5f, 0});
}

TEST(SignalTest, Dft20InverseOneSidedGivesARealSignal) {
  // irfft([3, 1+i, -1]) has 2 * (3 - 1) = 4 samples: [1, 0.5, 0, 1.5].
  ModelBuilder m(20);
  m.Input("x", DataType::kFloat, {1, 3, 2}).Output("y", DataType::kFloat, {1, 4, 1});
  auto& n = m.Node("DFT", {"x"}, {"y"}, "dft");
  n.add_attribute()->CopyFrom(IntAttr("inverse", 1));
  n.add_attribute()->CopyFrom(IntAttr("onesided", 1));
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 3, 2}, {3, 0, 1, 1, -1, 0}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {1, 0.5f, 0, 1.5f});
}

TEST(SignalTest, Dft17KeepsItsAxisAttribute) {
  // Opset 17: axis attribute 1 (the default) on [1, 2, 1]: fft([1, 3]) = [4, -2].
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1, 2, 1}).Output("y", DataType::kFloat, {1, 2, 2});
  m.Node("DFT", {"x"}, {"y"}, "dft");
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 2, 1}, {1, 3}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {4, 0, -2, 0});
}

TEST(SignalTest, Dft20RefusesTheComplexAxis) {
  ModelBuilder m(20);
  m.Input("x", DataType::kFloat, {2, 3, 2}).Input("axis", DataType::kInt64, {});
  m.Output("y", DataType::kFloat, {2, 3, 2});
  m.Node("DFT", {"x", "", "axis"}, {"y"}, "dft");
  auto out = RunModel(
      m, {{"x", Value(FloatTensor({2, 3, 2}, std::vector<float>(12, 1.0f)))}, {"axis", Value(Int64Tensor({}, {-1}))}},
      {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("other than the last"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace onyx
