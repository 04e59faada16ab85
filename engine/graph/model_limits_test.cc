// Model limits: node counts over graph and subgraphs, and subgraph depth,
// counted by hand on small generated graphs at and past each limit.
#include "graph/model_limits.h"

#include "gtest/gtest.h"

namespace onyx {
namespace {

void AddRelus(onnx::GraphProto& g, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    onnx::NodeProto* n = g.add_node();
    n->set_op_type("Relu");
  }
}

// An If whose then-branch holds the next If, `depth` Ifs in all.
onnx::GraphProto NestedIfs(int depth) {
  onnx::GraphProto leaf;
  AddRelus(leaf, 1);
  onnx::GraphProto current = leaf;
  for (int level = depth; level >= 1; --level) {
    onnx::GraphProto parent;
    onnx::NodeProto* n = parent.add_node();
    n->set_op_type("If");
    n->set_name("if" + std::to_string(level));
    onnx::AttributeProto* then_branch = n->add_attribute();
    then_branch->set_name("then_branch");
    then_branch->set_type(onnx::AttributeProto::GRAPH);
    *then_branch->mutable_g() = current;
    current = parent;
  }
  return current;
}

TEST(ModelLimitsTest, CountsNodesInSubgraphsToo) {
  onnx::GraphProto g;
  AddRelus(g, kMaxModelNodes - 1);
  EXPECT_TRUE(CheckModelLimits(g).ok());
  // One If (1 node) whose body holds one node: kMaxModelNodes + 1 in all.
  onnx::NodeProto* n = g.add_node();
  n->set_op_type("Loop");
  onnx::AttributeProto* body = n->add_attribute();
  body->set_name("body");
  body->set_type(onnx::AttributeProto::GRAPH);
  AddRelus(*body->mutable_g(), 1);
  absl::Status s = CheckModelLimits(g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("more than 500000 nodes"), std::string::npos) << s;
}

TEST(ModelLimitsTest, RefusesSubgraphsNestedPastTheLimitNamingTheNode) {
  EXPECT_TRUE(CheckModelLimits(NestedIfs(kMaxSubgraphDepth)).ok());
  absl::Status s = CheckModelLimits(NestedIfs(kMaxSubgraphDepth + 1));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("node 'if25' (If) nests subgraphs 25 deep, more than the 24 levels"), std::string::npos)
      << s;
}

TEST(ModelLimitsTest, GraphsAttributesCountAsSubgraphs) {
  onnx::GraphProto g;
  onnx::NodeProto* n = g.add_node();
  n->set_op_type("Custom");
  onnx::AttributeProto* graphs = n->add_attribute();
  graphs->set_name("bodies");
  graphs->set_type(onnx::AttributeProto::GRAPHS);
  AddRelus(*graphs->add_graphs(), 2);
  AddRelus(*graphs->add_graphs(), 3);
  EXPECT_TRUE(CheckModelLimits(g).ok());
}

}  // namespace
}  // namespace onyx
