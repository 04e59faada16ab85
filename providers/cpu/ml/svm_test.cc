// SVMClassifier/Regressor through a session. Expected values are worked out by
// hand (comments) or recorded from ONNX Runtime 1.30 on the same models.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/ml/ml_test_util.h"

namespace onyx {
namespace {

using testing::ExpectNear;
using testing::FloatsAttr;
using testing::FloatTensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::MlModel;
using testing::RunModel;
using testing::StringAttr;
using testing::Values;

// Rows [0.5, -1] and [1, 0.25]; support vectors [1, 0] and [0, 1] (and [-1, -1]).
Tensor Rows() { return FloatTensor({2, 2}, {0.5f, -1.0f, 1.0f, 0.25f}); }

TEST(SvmTest, BinaryClassifierScoresThePairAndMirrorsIt) {
  // Linear kernel: row 0 gives 0.5 * (x . v0) - 0.25 * (x . v1) + 0.1 = 0.25 + 0.25 + 0.1 = 0.6 > 0,
  // a vote for class 0; with post_transform NONE the scores are [-s, s].
  auto m = MlModel(
      "SVMClassifier", 1, {{"x", DataType::kFloat, {-1, 2}}},
      {{"label", DataType::kInt64, {-1}}, {"scores", DataType::kFloat, {-1, 2}}},
      {StringAttr("kernel_type", "LINEAR"), FloatsAttr("kernel_params", {0.5f, 0.25f, 2.0f}),
       IntsAttr("vectors_per_class", {1, 1}), FloatsAttr("support_vectors", {1, 0, 0, 1}),
       FloatsAttr("coefficients", {0.5f, -0.25f}), FloatsAttr("rho", {0.1f}), IntsAttr("classlabels_ints", {0, 1})});
  auto out = RunModel(m, {{"x", Value(Rows())}}, {"label", "scores"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), (std::vector<int64_t>{0, 0}));
  ExpectNear(Values<float>((*out)[1]), {-0.6f, 0.6f, -0.5375f, 0.5375f});
}

// Three classes, RBF kernel, one support vector each.
testing::ModelBuilder ThreeClasses(bool probabilities) {
  std::vector<onnx::AttributeProto> attrs = {StringAttr("kernel_type", "RBF"),
                                             FloatsAttr("kernel_params", {0.5f, 0.25f, 2.0f}),
                                             IntsAttr("vectors_per_class", {1, 1, 1}),
                                             FloatsAttr("support_vectors", {1, 0, 0, 1, -1, -1}),
                                             FloatsAttr("coefficients", {0.5f, -0.25f, 0.75f, 1.0f, -0.5f, 0.25f}),
                                             FloatsAttr("rho", {0.1f, -0.2f, 0.3f}),
                                             IntsAttr("classlabels_ints", {7, 8, 9})};
  if (probabilities) {
    attrs.push_back(FloatsAttr("prob_a", {-2.0f, -1.5f, -1.0f}));
    attrs.push_back(FloatsAttr("prob_b", {0.1f, 0.0f, -0.1f}));
  }
  return MlModel("SVMClassifier", 1, {{"x", DataType::kFloat, {-1, 2}}},
                 {{"label", DataType::kInt64, {-1}}, {"scores", DataType::kFloat, {-1, 3}}}, std::move(attrs));
}

TEST(SvmTest, MulticlassVotesAndCouplesProbabilities) {
  // Recorded from ONNX Runtime 1.30: the three pair scores, then with prob_a/b
  // the coupled class probabilities (each row sums to 1).
  auto scores = RunModel(ThreeClasses(false), {{"x", Value(Rows())}}, {"label", "scores"});
  ASSERT_TRUE(scores.ok()) << scores.status();
  EXPECT_EQ(Values<int64_t>((*scores)[0]), (std::vector<int64_t>{7, 7}));
  ExpectNear(Values<float>((*scores)[1]),
             {0.33777249f, 0.57875079f, 0.32144666f, 0.47015828f, 0.81570399f, 0.08657359f});
  auto probabilities = RunModel(ThreeClasses(true), {{"x", Value(Rows())}}, {"label", "scores"});
  ASSERT_TRUE(probabilities.ok()) << probabilities.status();
  EXPECT_EQ(Values<int64_t>((*probabilities)[0]), (std::vector<int64_t>{7, 7}));
  ExpectNear(Values<float>((*probabilities)[1]),
             {0.50578946f, 0.29086733f, 0.20334335f, 0.58016014f, 0.23896296f, 0.18087681f});
}

TEST(SvmTest, RegressorPolynomialKernel) {
  // K = (0.5 x . v + 0.25)^2: row 0 -> 0.5 * 0.25 - 0.25 * 0.0625 + 0.1 = 0.209375.
  auto m = MlModel("SVMRegressor", 1, {{"x", DataType::kFloat, {-1, 2}}}, {{"y", DataType::kFloat, {-1, 1}}},
                   {StringAttr("kernel_type", "POLY"), FloatsAttr("kernel_params", {0.5f, 0.25f, 2.0f}),
                    IntAttr("n_supports", 2), FloatsAttr("support_vectors", {1, 0, 0, 1}),
                    FloatsAttr("coefficients", {0.5f, -0.25f}), FloatsAttr("rho", {0.1f})});
  auto out = RunModel(m, {{"x", Value(Rows())}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {0.209375f, 0.34609374f});
  *m.proto().mutable_graph()->mutable_node(0)->add_attribute() = IntAttr("one_class", 1);
  out = RunModel(m, {{"x", Value(Rows())}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {1.0f, 1.0f});
}

}  // namespace
}  // namespace onyx
