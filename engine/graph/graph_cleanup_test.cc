#include "graph/graph_cleanup.h"

#include <string>
#include <vector>

#include "graph/model_loader.h"
#include "gtest/gtest.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::ModelBuilder;

std::vector<std::string> NodeNames(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (const auto& n : g.node()) names.push_back(n.name());
  return names;
}

TEST(SortNodesTest, KeepsASortedGraphAsItIs) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2}).Output("z", DataType::kFloat, {2});
  m.Node("Abs", {"x"}, {"a"}, "a");
  m.Node("Neg", {"x"}, {"b"}, "b");
  m.Node("Add", {"a", "b"}, {"z"}, "c");
  onnx::GraphProto g = m.proto().graph();
  ASSERT_TRUE(SortNodes(g).ok());
  EXPECT_EQ(NodeNames(g), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(SortNodesTest, SortsShuffledNodesStably) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2}).Output("z", DataType::kFloat, {2});
  m.Node("Add", {"c", "b"}, {"z"}, "d");
  m.Node("Relu", {"a"}, {"c"}, "c");
  m.Node("Neg", {"x"}, {"b"}, "b");
  m.Node("Abs", {"x"}, {"a"}, "a");
  onnx::GraphProto g = m.proto().graph();
  ASSERT_TRUE(SortNodes(g).ok());
  // Among ready nodes the earlier one in the file goes first: b before a.
  EXPECT_EQ(NodeNames(g), (std::vector<std::string>{"b", "a", "c", "d"}));
}

TEST(SortNodesTest, SubgraphReadsOrderTheirProducerFirst) {
  ModelBuilder then_branch(13);
  then_branch.Output("t", DataType::kFloat, {2});
  then_branch.Node("Identity", {"outer"}, {"t"}, "inner");
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2}).Input("cond", DataType::kBool, {}).Output("y", DataType::kFloat, {2});
  onnx::NodeProto& if_node = m.Node("If", {"cond"}, {"y"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* attr = if_node.add_attribute();
    attr->set_name(branch);
    attr->set_type(onnx::AttributeProto::GRAPH);
    *attr->mutable_g() = then_branch.proto().graph();
  }
  m.Node("Abs", {"x"}, {"outer"}, "producer");
  onnx::GraphProto g = m.proto().graph();
  ASSERT_TRUE(SortNodes(g).ok());
  EXPECT_EQ(NodeNames(g), (std::vector<std::string>{"producer", "if"}));
}

TEST(SortNodesTest, RefusesACycleNamingItsNodes) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2}).Output("z", DataType::kFloat, {2});
  m.Node("Abs", {"x"}, {"a"}, "entry");
  m.Node("Add", {"a", "c"}, {"b"}, "loop_add");
  m.Node("Relu", {"b"}, {"c"}, "loop_relu");
  m.Node("Neg", {"c"}, {"z"}, "exit");
  onnx::GraphProto g = m.proto().graph();
  absl::Status s = SortNodes(g);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(s.message());
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Add 'loop_add'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Relu 'loop_relu'"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("'entry'"), std::string::npos) << msg;
}

TEST(PruneUnusedTest, DropsDeadNodesAndTheirInitializersButKeepsInputDefaults) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2}).Input("bias", DataType::kFloat, {2}).Output("z", DataType::kFloat, {2});
  m.Initializer("bias", testing::FloatTensor({2}, {1, 2}));  // an overridable input's default
  m.Initializer("w", testing::FloatTensor({2}, {3, 4}));     // read by dead nodes only
  m.Initializer("unread", testing::FloatTensor({2}, {5, 6}));
  m.Node("Abs", {"x"}, {"z"}, "live");
  m.Node("Mul", {"x", "w"}, {"dead1"}, "dead_mul");
  m.Node("Relu", {"dead1"}, {"dead2"}, "dead_relu");
  onnx::GraphProto g = m.proto().graph();
  PruneCounts counts = PruneUnused(g);
  EXPECT_EQ(counts.nodes, 2);
  EXPECT_EQ(counts.initializers, 2);
  EXPECT_EQ(NodeNames(g), (std::vector<std::string>{"live"}));
  ASSERT_EQ(g.initializer_size(), 1);
  EXPECT_EQ(g.initializer(0).name(), "bias");
}

TEST(LoadModelTest, LoadsShuffledNodesAndCountsWhatItDropped) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2}).Output("z", DataType::kFloat, {2});
  m.Initializer("w", testing::FloatTensor({2}, {3, 4}));
  m.Node("Relu", {"y"}, {"z"}, "second");
  m.Node("Mul", {"x", "w"}, {"unused"}, "dead");
  m.Node("Abs", {"x"}, {"y"}, "first");
  auto loaded = LoadModel(m.Serialize(), LoadOptions{});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->pruned_nodes, 1);
  EXPECT_EQ(loaded->pruned_initializers, 1);
  auto order = loaded->graph->TopologicalOrder();
  ASSERT_TRUE(order.ok());
  ASSERT_EQ(order->size(), 2u);
  EXPECT_EQ((*order)[0]->name, "first");
}

TEST(LoadModelTest, RefusesACyclicModelNamingTheModelAndTheCycle) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2}).Output("b", DataType::kFloat, {2});
  m.Node("Add", {"x", "b"}, {"a"}, "n1");
  m.Node("Relu", {"a"}, {"b"}, "n2");
  LoadOptions options;
  options.model_name = "loopy";
  auto loaded = LoadModel(m.Serialize(), options);
  ASSERT_FALSE(loaded.ok());
  const std::string msg(loaded.status().message());
  EXPECT_NE(msg.find("loopy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Add 'n1' -> Relu 'n2' -> Add 'n1'"), std::string::npos) << msg;
}

}  // namespace
}  // namespace onyx
