// LinearClassifier/Regressor and the element-wise preprocessors through a
// session. Expected values are worked out by hand (comments) or recorded from
// ONNX Runtime 1.30 on the same models.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/ml/ml_test_util.h"

namespace onyx {
namespace {

using testing::ExpectNear;
using testing::FloatAttr;
using testing::FloatsAttr;
using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::MlModel;
using testing::RunModel;
using testing::StringAttr;
using testing::Values;

// Rows [1, -2] and [0.5, 0.25].
Tensor TwoRows() { return FloatTensor({2, 2}, {1.0f, -2.0f, 0.5f, 0.25f}); }

TEST(LinearTest, BinaryClassifierDerivesTheSecondColumn) {
  // Scores 0.3 - 0.2 + 0.05 = 0.15 and 0.15 + 0.025 + 0.05 = 0.225, both > 0 -> label 4.
  struct Case {
    std::string post_transform;
    std::vector<float> scores;
  };
  const std::vector<Case> cases = {
      {"NONE", {0.85f, 0.15f, 0.775f, 0.225f}},                  // [1 - s, s]
      {"LOGISTIC", {0.46257f, 0.53743f, 0.443986f, 0.556014f}},  // [1 - L(s), L(s)]
      {"SOFTMAX", {0.85f, 0.15f, 0.775f, 0.225f}},               // ignored for one score
      {"PROBIT", {-1.036613f, -0.755524f, 0.0f, 0.0f}},          // ONNX Runtime packs the probits first
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.post_transform);
    auto m = MlModel("LinearClassifier", 1, {{"x", DataType::kFloat, {-1, 2}}},
                     {{"label", DataType::kInt64, {-1}}, {"scores", DataType::kFloat, {-1, 2}}},
                     {FloatsAttr("coefficients", {0.3f, 0.1f}), FloatsAttr("intercepts", {0.05f}),
                      IntsAttr("classlabels_ints", {3, 4}), StringAttr("post_transform", c.post_transform)});
    auto out = RunModel(m, {{"x", Value(TwoRows())}}, {"label", "scores"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{4, 4}));
    ExpectNear(Values<float>((*out)[1]), c.scores);
  }
}

TEST(LinearTest, MulticlassClassifierTakesTheArgmaxAndSoftmax) {
  // Scores [0.15, -1, 0.1] and [0.225, 0, 0.1]: class 0 both times.
  auto m = MlModel(
      "LinearClassifier", 1, {{"x", DataType::kFloat, {-1, 2}}},
      {{"label", DataType::kInt64, {-1}}, {"scores", DataType::kFloat, {-1, 3}}},
      {FloatsAttr("coefficients", {0.3f, 0.1f, -0.2f, 0.4f, 0.0f, 0.0f}), FloatsAttr("intercepts", {0.05f, 0.0f, 0.1f}),
       IntsAttr("classlabels_ints", {3, 4, 5}), StringAttr("post_transform", "SOFTMAX")});
  auto out = RunModel(m, {{"x", Value(TwoRows())}}, {"label", "scores"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{3, 3}));
  ExpectNear(Values<float>((*out)[1]), {0.440943f, 0.139619f, 0.419438f, 0.372993f, 0.297841f, 0.329165f});
}

TEST(LinearTest, RegressorTransformsOnlyMultipleTargets) {
  // Two targets: [0.15, -0.9] and [0.225, 0.1], then a softmax per row.
  auto two = MlModel("LinearRegressor", 1, {{"x", DataType::kFloat, {-1, 2}}}, {{"y", DataType::kFloat, {-1, 2}}},
                     {FloatsAttr("coefficients", {0.3f, 0.1f, -0.2f, 0.4f}), FloatsAttr("intercepts", {0.05f, 0.1f}),
                      IntAttr("targets", 2), StringAttr("post_transform", "SOFTMAX")});
  auto out = RunModel(two, {{"x", Value(TwoRows())}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {0.740775f, 0.259225f, 0.531209f, 0.468791f});
  // One target: LOGISTIC is ignored, as in ONNX Runtime.
  auto one = MlModel("LinearRegressor", 1, {{"x", DataType::kFloat, {-1, 2}}}, {{"y", DataType::kFloat, {-1, 1}}},
                     {FloatsAttr("coefficients", {0.3f, 0.1f}), FloatsAttr("intercepts", {0.05f}),
                      StringAttr("post_transform", "LOGISTIC")});
  out = RunModel(one, {{"x", Value(TwoRows())}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {0.15f, 0.225f});
}

TEST(ScaleTest, NormalizerModes) {
  // Rows [1, -2, 0], [0, 0, 0] (copied), [-1, -3, -2] (MAX divides by -1).
  const Tensor x = FloatTensor({3, 3}, {1, -2, 0, 0, 0, 0, -1, -3, -2});
  struct Case {
    std::string norm;
    std::vector<float> expected;
  };
  const std::vector<Case> cases = {
      {"MAX", {1, -2, 0, 0, 0, 0, 1, 3, 2}},
      {"L1", {1 / 3.f, -2 / 3.f, 0, 0, 0, 0, -1 / 6.f, -0.5f, -1 / 3.f}},
      {"L2", {0.447214f, -0.894427f, 0, 0, 0, 0, -0.267261f, -0.801784f, -0.534522f}},  // sign kept
  };
  for (const Case& c : cases) {
    auto m = MlModel("Normalizer", 1, {{"x", DataType::kFloat, {-1, 3}}}, {{"y", DataType::kFloat, {-1, 3}}},
                     {StringAttr("norm", c.norm)});
    auto out = RunModel(m, {{"x", Value(x)}}, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear(Values<float>((*out)[0]), c.expected);
  }
}

TEST(ScaleTest, ScalerPerFeatureAndBroadcast) {
  // (x - [1, 2]) * [2, 3]: (1-1)*2, (-2-2)*3, (0.5-1)*2, (0.25-2)*3.
  auto m = MlModel("Scaler", 1, {{"x", DataType::kFloat, {-1, 2}}}, {{"y", DataType::kFloat, {-1, 2}}},
                   {FloatsAttr("offset", {1.0f, 2.0f}), FloatsAttr("scale", {2.0f, 3.0f})});
  auto out = RunModel(m, {{"x", Value(TwoRows())}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {0.0f, -12.0f, -1.0f, -5.25f});
}

TEST(ScaleTest, ImputerReplacesNanPerColumn) {
  auto m = MlModel("Imputer", 1, {{"x", DataType::kFloat, {-1, 2}}}, {{"y", DataType::kFloat, {-1, 2}}},
                   {FloatsAttr("imputed_value_floats", {7.0f, 8.0f}), FloatAttr("replaced_value_float", NAN)});
  auto out = RunModel(m, {{"x", Value(FloatTensor({2, 2}, {1.0f, NAN, NAN, 0.25f}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {1.0f, 8.0f, 7.0f, 0.25f});
}

TEST(ScaleTest, BinarizerThresholdsAndRefusesNan) {
  auto m = MlModel("Binarizer", 1, {{"x", DataType::kFloat, {-1}}}, {{"y", DataType::kFloat, {-1}}},
                   {FloatAttr("threshold", 0.5f)});
  auto out = RunModel(m, {{"x", Value(FloatTensor({4}, {1.0f, -2.0f, 0.5f, 0.6f}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {1.0f, 0.0f, 0.0f, 1.0f});
  out = RunModel(m, {{"x", Value(FloatTensor({2}, {1.0f, NAN}))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("NaN"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace onyx
