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

TEST(ActivationTest, Gelu20ErfAndTanhForms) {
  // 0.5 * x * (1 + erf(x / sqrt(2))) and
  // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), in double.
  const std::vector<float> x = {-6, -1.5, -0.5, 0, 0.5, 1.5, 6};
  const std::vector<double> erf_form = {-5.91952587e-09, -0.100210802, -0.154268769, 0,
                                        0.345731231,     1.39978920,   5.99999999};
  const std::vector<double> tanh_form = {-8.43964898e-11, -0.100428423, -0.154285990, 0, 0.345714010, 1.39957158, 6.0};
  const std::vector<float> y_default = RunUnary(20, "Gelu", x);
  const std::vector<float> y_none = RunUnary(20, "Gelu", x, {testing::StringAttr("approximate", "none")});
  const std::vector<float> y_tanh = RunUnary(20, "Gelu", x, {testing::StringAttr("approximate", "tanh")});
  ASSERT_EQ(y_default.size(), x.size());
  ASSERT_EQ(y_none.size(), x.size());
  ASSERT_EQ(y_tanh.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(y_default[i], erf_form[i], 2e-6 * std::fabs(erf_form[i]) + 1e-8) << i;
    EXPECT_EQ(y_none[i], y_default[i]) << i;
    EXPECT_NEAR(y_tanh[i], tanh_form[i], 2e-6 * std::fabs(tanh_form[i]) + 1e-8) << i;
  }
}

TEST(ActivationTest, GeluRejectsUnknownApproximation) {
  ModelBuilder m(20);
  m.Input("x", DataType::kFloat, {1}).Output("y", DataType::kFloat, {1});
  *m.Node("Gelu", {"x"}, {"y"}).add_attribute() = testing::StringAttr("approximate", "sigmoid");
  auto out = RunModel(m, {{"x", Value(FloatTensor({1}, {1}))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("approximate"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace onyx
