// Tree ensembles run through a session. Expected values are worked out by
// hand (comments) or were recorded from ONNX Runtime 1.30 on the same models,
// including its binary-classifier and missing-value rules.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatAttr;
using testing::FloatsAttr;
using testing::FloatTensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::StringAttr;
using testing::StringsAttr;
using testing::Values;

// One tree: node 0 tests feature 1 <= 0.5; leaf 1 (true) and leaf 2 (false).
void AddStump(onnx::NodeProto& n, const std::string& mode = "BRANCH_LEQ") {
  *n.add_attribute() = IntsAttr("nodes_treeids", {0, 0, 0});
  *n.add_attribute() = IntsAttr("nodes_nodeids", {0, 1, 2});
  *n.add_attribute() = IntsAttr("nodes_featureids", {1, 0, 0});
  *n.add_attribute() = StringsAttr("nodes_modes", {mode, "LEAF", "LEAF"});
  *n.add_attribute() = FloatsAttr("nodes_values", {0.5f, 0.0f, 0.0f});
  *n.add_attribute() = IntsAttr("nodes_truenodeids", {1, 0, 0});
  *n.add_attribute() = IntsAttr("nodes_falsenodeids", {2, 0, 0});
}

ModelBuilder Regressor(const std::vector<float>& weights, const std::vector<int64_t>& target_ids, int64_t n_targets,
                       const std::string& post_transform = "NONE") {
  ModelBuilder m(17);
  m.Opset("ai.onnx.ml", 3);
  m.Input("x", DataType::kFloat, {-1, 2}).Output("y", DataType::kFloat, {-1, n_targets});
  auto& n = m.Node("TreeEnsembleRegressor", {"x"}, {"y"}, "trees");
  n.set_domain("ai.onnx.ml");
  AddStump(n);
  *n.add_attribute() = IntsAttr("target_treeids", {0, 0});
  *n.add_attribute() = IntsAttr("target_nodeids", {1, 2});
  *n.add_attribute() = IntsAttr("target_ids", target_ids);
  *n.add_attribute() = FloatsAttr("target_weights", weights);
  *n.add_attribute() = IntAttr("n_targets", n_targets);
  *n.add_attribute() = StringAttr("post_transform", post_transform);
  return m;
}

TEST(TreeEnsembleTest, RegressorFollowsBranchesToLeafWeights) {
  // Row 0: x1 = 0.1 <= 0.5 -> leaf 1 (0.3); row 1: x1 = 0.7 -> leaf 2 (0.8).
  auto out = RunModel(Regressor({0.3f, 0.8f}, {0, 0}, 1), {{"x", Value(FloatTensor({2, 2}, {0.2f, 0.1f, 0.9f, 0.7f}))}},
                      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().dims(), (Dims{2, 1}));
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0.3f, 0.8f}));
}

TEST(TreeEnsembleTest, ManyRowsAcrossBlocksAndThreads) {
  // Rows are summed in blocks of 128 in parallel: odd rows (x1 = 0.7) reach leaf 2.
  constexpr int64_t kRows = 1000;
  std::vector<float> x(2 * kRows);
  for (int64_t r = 0; r < kRows; ++r) x[2 * r + 1] = r % 2 ? 0.7f : 0.1f;
  auto out = RunModel(Regressor({0.3f, 0.8f}, {0, 0}, 1), {{"x", Value(FloatTensor({kRows, 2}, x))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> y = Values<float>((*out)[0]);
  ASSERT_EQ(y.size(), static_cast<size_t>(kRows));
  for (int64_t r = 0; r < kRows; ++r) ASSERT_EQ(y[r], r % 2 ? 0.8f : 0.3f) << "row " << r;
}

TEST(TreeEnsembleTest, NanGoesFalseUnlessMissingTracksTrue) {
  // NaN <= 0.5 is false -> leaf 2; with missing_value_tracks_true -> leaf 1.
  for (int64_t tracks : {0, 1}) {
    ModelBuilder m = Regressor({0.3f, 0.8f}, {0, 0}, 1);
    *m.proto().mutable_graph()->mutable_node(0)->add_attribute() =
        IntsAttr("nodes_missing_value_tracks_true", {tracks, 0, 0});
    auto out = RunModel(m, {{"x", Value(FloatTensor({1, 2}, {0.0f, NAN}))}}, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{tracks ? 0.3f : 0.8f}));
  }
}

TEST(TreeEnsembleTest, OneTargetRegressorIgnoresAllTransformsButProbit) {
  // ONNX Runtime applies only PROBIT to a single target: sqrt(2) * erfinv(2 * 0.8 - 1)
  // by Winitzki's approximation = 0.84175611 (the exact quantile is 0.84162).
  auto logistic = RunModel(Regressor({0.3f, 0.8f}, {0, 0}, 1, "LOGISTIC"),
                           {{"x", Value(FloatTensor({1, 2}, {0.0f, 0.9f}))}}, {"y"});
  ASSERT_TRUE(logistic.ok()) << logistic.status();
  EXPECT_EQ(Values<float>((*logistic)[0]), (std::vector<float>{0.8f}));
  auto probit =
      RunModel(Regressor({0.3f, 0.8f}, {0, 0}, 1, "PROBIT"), {{"x", Value(FloatTensor({1, 2}, {0.0f, 0.9f}))}}, {"y"});
  ASSERT_TRUE(probit.ok()) << probit.status();
  EXPECT_NEAR(Values<float>((*probit)[0])[0], 0.8417561f, 1e-6);
}

TEST(TreeEnsembleTest, TargetNoLeafReachedIsZeroEvenWithBaseValues) {
  // Two targets, every weight on target 1; base [1, 2] -> target 0 stays 0.
  ModelBuilder m = Regressor({0.3f, 0.5f}, {1, 1}, 2);
  *m.proto().mutable_graph()->mutable_node(0)->add_attribute() = FloatsAttr("base_values", {1.0f, 2.0f});
  auto out = RunModel(m, {{"x", Value(FloatTensor({2, 2}, {0.2f, 0.1f, 0.9f, 0.7f}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0.0f, 2.3f, 0.0f, 2.5f}));
}

// The stump of AddStump as a classifier; weights on leaves 1 and 2.
ModelBuilder Classifier(const std::vector<int64_t>& class_ids, const std::vector<float>& weights,
                        const std::vector<int64_t>& labels, const std::string& post_transform = "NONE") {
  ModelBuilder m(17);
  m.Opset("ai.onnx.ml", 3);
  m.Input("x", DataType::kFloat, {-1, 2});
  m.Output("label", DataType::kInt64, {-1})
      .Output("scores", DataType::kFloat, {-1, static_cast<int64_t>(labels.size())});
  auto& n = m.Node("TreeEnsembleClassifier", {"x"}, {"label", "scores"}, "trees");
  n.set_domain("ai.onnx.ml");
  AddStump(n);
  *n.add_attribute() = IntsAttr("class_treeids", std::vector<int64_t>(class_ids.size(), 0));
  std::vector<int64_t> nodes;
  for (size_t i = 0; i < class_ids.size(); ++i) nodes.push_back(class_ids.size() == 2 ? 1 + i : 1 + i / 2);
  *n.add_attribute() = IntsAttr("class_nodeids", nodes);
  *n.add_attribute() = IntsAttr("class_ids", class_ids);
  *n.add_attribute() = FloatsAttr("class_weights", weights);
  *n.add_attribute() = IntsAttr("classlabels_int64s", labels);
  *n.add_attribute() = StringAttr("post_transform", post_transform);
  return m;
}

struct ClassifierCase {
  std::string name;
  std::vector<int64_t> class_ids;
  std::vector<float> weights;
  std::vector<float> base_values;
  std::vector<int64_t> labels;
  std::string post_transform;
  std::vector<int64_t> expected_labels;
  std::vector<float> expected_scores;
};

// Rows x1 = 0.1 (leaf 1) and x1 = 0.7 (leaf 2); expectations recorded from
// ONNX Runtime 1.30 on the same models.
TEST(TreeEnsembleTest, ClassifierMatchesOnnxRuntimeBinaryRules) {
  const std::vector<ClassifierCase> cases = {
      // Binary case, no negative weight: the class-0 sum s decides at 0.5, scores [1 - s, s].
      {"positive", {0, 0}, {0.3f, 0.8f}, {}, {5, 7}, "NONE", {5, 7}, {0.7f, 0.3f, 0.2f, 0.8f}},
      {"positive_logistic",
       {0, 0},
       {0.3f, 0.8f},
       {},
       {5, 7},
       "LOGISTIC",
       {5, 7},
       {0.425557f, 0.574443f, 0.310026f, 0.689974f}},
      // Binary case on class 1 with a negative weight: decides at 0, class 0 never scored.
      {"mixed_class1", {1, 1}, {0.3f, -0.8f}, {}, {5, 7}, "NONE", {7, 5}, {0.0f, 0.3f, 0.0f, -0.8f}},
      {"mixed_class0", {0, 0}, {0.3f, -0.8f}, {}, {5, 7}, "NONE", {7, 5}, {-0.3f, 0.3f, 0.8f, -0.8f}},
      // Both classes named: not the binary case; ONNX Runtime returns 1 or 0 itself.
      {"two_ids_base", {0, 1}, {0.3f, 0.8f}, {1.0f, 2.0f}, {5, 7}, "NONE", {1, 1}, {1.3f, 0.0f, 0.0f, 2.0f}},
      // Three classes: base values, argmax over scored classes, SOFTMAX_ZERO.
      {"three",
       {1, 2},
       {0.3f, -0.8f},
       {0.1f, 0.2f, 0.3f},
       {1, 2, 3},
       "SOFTMAX_ZERO",
       {2, 2},
       {0.269307f, 0.40176f, 0.328933f, 0.376792f, 0.41642f, 0.206788f}},
      {"three_no_base",
       {1, 2},
       {0.3f, -0.8f},
       {},
       {1, 2, 3},
       "SOFTMAX_ZERO",
       {2, 3},
       {0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 1.0f}},
  };
  for (const ClassifierCase& c : cases) {
    SCOPED_TRACE(c.name);
    ModelBuilder m = Classifier(c.class_ids, c.weights, c.labels, c.post_transform);
    if (!c.base_values.empty()) {
      *m.proto().mutable_graph()->mutable_node(0)->add_attribute() = FloatsAttr("base_values", c.base_values);
    }
    auto out = RunModel(m, {{"x", Value(FloatTensor({2, 2}, {0.2f, 0.1f, 0.9f, 0.7f}))}}, {"label", "scores"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<int64_t>((*out)[0]), c.expected_labels);
    const std::vector<float> scores = Values<float>((*out)[1]);
    ASSERT_EQ(scores.size(), c.expected_scores.size());
    for (size_t i = 0; i < scores.size(); ++i) EXPECT_NEAR(scores[i], c.expected_scores[i], 1e-6) << i;
  }
}

TEST(TreeEnsembleTest, ClassifierWithStringLabels) {
  ModelBuilder m = Classifier({1, 1}, {0.3f, -0.8f}, {0, 0});
  auto* node = m.proto().mutable_graph()->mutable_node(0);
  for (int i = 0; i < node->attribute_size(); ++i) {
    if (node->attribute(i).name() == "classlabels_int64s") node->mutable_attribute()->DeleteSubrange(i, 1);
  }
  *node->add_attribute() = StringsAttr("classlabels_strings", {"a", "b"});
  m.proto().mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::STRING);
  auto out = RunModel(m, {{"x", Value(FloatTensor({2, 2}, {0.2f, 0.1f, 0.9f, 0.7f}))}}, {"label"});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& labels = (*out)[0].tensor();
  EXPECT_EQ(labels.data<std::string>()[0], "b");
  EXPECT_EQ(labels.data<std::string>()[1], "a");
}

TEST(TreeEnsembleTest, ClassIdBeyondTheLabelsIsRefusedAtLoad) {
  auto out =
      RunModel(Classifier({0, 2}, {0.3f, 0.8f}, {5, 7}), {{"x", Value(FloatTensor({1, 2}, {0.2f, 0.1f}))}}, {"label"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("class id 2"), std::string::npos) << out.status();
}

TEST(TreeEnsembleTest, CycleIsRefusedAtLoad) {
  ModelBuilder m = Regressor({0.3f, 0.8f}, {0, 0}, 1);
  auto* node = m.proto().mutable_graph()->mutable_node(0);
  for (auto& a : *node->mutable_attribute()) {
    if (a.name() == "nodes_modes") a.set_strings(2, "BRANCH_LT");  // node 2 becomes a branch
    if (a.name() == "nodes_truenodeids") a.set_ints(2, 0);         // back to the root
    if (a.name() == "nodes_falsenodeids") a.set_ints(2, 1);
  }
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 2}, {0.2f, 0.1f}))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("cycle"), std::string::npos) << out.status();
}

// TreeEnsemble-5: two stumps on feature 0 (x <= 0.5), leaves 1/2 (targets 0/1)
// and 3/4 (targets 0/1).
ModelBuilder TreeEnsemble5(int64_t aggregate, int64_t post_transform) {
  ModelBuilder m(17);
  m.Opset("ai.onnx.ml", 5);
  m.Input("x", DataType::kFloat, {-1, 1}).Output("y", DataType::kFloat, {-1, 2});
  auto& n = m.Node("TreeEnsemble", {"x"}, {"y"}, "trees");
  n.set_domain("ai.onnx.ml");
  auto tensor_attr = [](const std::string& name, onnx::TensorProto::DataType type, std::vector<float> values) {
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::TENSOR);
    a.mutable_t()->set_data_type(type);
    a.mutable_t()->add_dims(static_cast<int64_t>(values.size()));
    for (float v : values) {
      if (type == onnx::TensorProto::UINT8) a.mutable_t()->add_int32_data(static_cast<int32_t>(v));
      else a.mutable_t()->add_float_data(v);
    }
    return a;
  };
  *n.add_attribute() = IntAttr("n_targets", 2);
  *n.add_attribute() = IntAttr("aggregate_function", aggregate);
  *n.add_attribute() = IntAttr("post_transform", post_transform);
  *n.add_attribute() = IntsAttr("tree_roots", {0, 1});
  *n.add_attribute() = IntsAttr("nodes_featureids", {0, 0});
  *n.add_attribute() = IntsAttr("nodes_truenodeids", {0, 2});
  *n.add_attribute() = IntsAttr("nodes_falsenodeids", {1, 3});
  *n.add_attribute() = IntsAttr("nodes_trueleafs", {1, 1});
  *n.add_attribute() = IntsAttr("nodes_falseleafs", {1, 1});
  *n.add_attribute() = tensor_attr("nodes_modes", onnx::TensorProto::UINT8, {0, 0});
  *n.add_attribute() = tensor_attr("nodes_splits", onnx::TensorProto::FLOAT, {0.5f, 0.5f});
  *n.add_attribute() = IntsAttr("leaf_targetids", {0, 1, 0, 1});
  *n.add_attribute() = tensor_attr("leaf_weights", onnx::TensorProto::FLOAT, {1.0f, 2.0f, 3.0f, 4.0f});
  return m;
}

TEST(TreeEnsembleTest, TreeEnsemble5AggregatesAndTransformsAsOnnxRuntime) {
  // Row 0.2 reaches leaves 0 and 2 (target 0: 1, 3); row 0.9 leaves 1 and 3 (target 1: 2, 4).
  struct Case {
    int64_t aggregate, post_transform;
    std::vector<float> expected;
  };
  const std::vector<Case> cases = {
      {1, 0, {4, 0, 0, 6}},  // SUM
      {0, 0, {2, 0, 0, 3}},  // AVERAGE
      {2, 0, {1, 0, 0, 2}},  // MIN
      {3, 0, {3, 0, 0, 4}},  // MAX
      // ONNX Runtime 1.30 reads post_transform 2 as SOFTMAX (the spec's table says LOGISTIC).
      {1, 2, {0.98201376f, 0.01798621f, 0.00247262f, 0.99752742f}},
  };
  for (const Case& c : cases) {
    auto out = RunModel(TreeEnsemble5(c.aggregate, c.post_transform), {{"x", Value(FloatTensor({2, 1}, {0.2f, 0.9f}))}},
                        {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<float> y = Values<float>((*out)[0]);
    ASSERT_EQ(y.size(), 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[i], c.expected[i], 1e-6) << c.aggregate << "/" << c.post_transform;
  }
}

TEST(TreeEnsembleTest, OldTreeOpsAreDeprecatedAtMlOpset5) {
  ModelBuilder m = Regressor({0.3f, 0.8f}, {0, 0}, 1);
  m.Opset("ai.onnx.ml", 5);
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 2}, {0.2f, 0.1f}))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("deprecated"), std::string::npos) << out.status();
}

TEST(TreeEnsembleTest, MlOpsetNewerThanFiveIsRefusedByName) {
  ModelBuilder m = Regressor({0.3f, 0.8f}, {0, 0}, 1);
  m.Opset("ai.onnx.ml", 6);
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 2}, {0.2f, 0.1f}))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("ai.onnx.ml opset 6 is newer than the supported 5"), std::string::npos)
      << out.status();
}

}  // namespace
}  // namespace onyx
