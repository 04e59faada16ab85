// Activations of opsets 18-20 through a session: Mish-18 and Gelu-20.
// Expected values are computed in double with numpy (formulas in comments).
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::ModelBuilder;
using testing::RunModel;
using testing::Values;

std::vector<float> RunUnary(int opset, const std::string& op, const std::vector<float>& x,
                            const std::vector<onnx::AttributeProto>& attrs = {}) {
  const int64_t n = static_cast<int64_t>(x.size());
  ModelBuilder m(opset);
  m.Input("x", DataType::kFloat, {n}).Output("y", DataType::kFloat, {n});
  auto& node = m.Node(op, {"x"}, {"y"});
  for (const auto& a : attrs) *node.add_attribute() = a;
  auto out = RunModel(m, {{"x", Value(FloatTensor({n}, x))}}, {"y"});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? Values<float>((*out)[0]) : std::vector<float>();
}

TEST(ActivationTest, MishIsAccurateForLargeMagnitudes) {
  // x * tanh(log1p(exp(x))): for x << 0 it is about x * exp(x), which a naive
  // log(1 + exp(x)) rounds to 0; for x >> 0 it is x (exp(x) overflows).
  const std::vector<float> x = {-80, -30, -5, -1, 0, 1, 5, 30, 100};
  const std::vector<double> expected = {
      -1.44388111e-33, -2.80728689e-12, -3.35762377e-02, -3.03401461e-01, 0, 8.65098388e-01, 4.99955208e+00, 30, 100};
  const std::vector<float> y = RunUnary(18, "Mish", x);
  ASSERT_EQ(y.size(), expected.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-6 * std::fabs(expected[i])) << i;
}

}  // namespace
}  // namespace onyx
