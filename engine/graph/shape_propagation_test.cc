// PropagateStaticShapes on graphs built without load-time inference, so that
// every intermediate starts unknown; expected dims are worked out by hand.
#include "graph/shape_propagation.h"

#include "gtest/gtest.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::Int64Tensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;

std::vector<int64_t> DimsOf(const Graph& g, const std::string& value) {
  const ValueInfo* info = g.FindValueInfo(value);
  if (info == nullptr || !info->has_shape) return {-100};
  return info->dims;
}

// ShuffleNet's channel shuffle with its shapes already folded to constants,
// then a strided convolution: one pass makes the whole chain static.
TEST(ShapePropagationTest, ChannelShuffleChainBecomesStaticInOnePass) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2, 8, 4, 4}).Output("y", DataType::kFloat, {-1, -1, -1, -1});
  m.Initializer("s1", Int64Tensor({5}, {2, 2, 4, 4, 4}));
  m.Initializer("s2", Int64Tensor({4}, {2, -1, 4, 4}));
  m.Initializer("w", RandomFloatTensor({6, 8, 3, 3}, 1));
  m.Node("Reshape", {"x", "s1"}, {"r1"});
  *m.Node("Transpose", {"r1"}, {"t"}).add_attribute() = IntsAttr("perm", {0, 2, 1, 3, 4});
  m.Node("Reshape", {"t", "s2"}, {"r2"});
  auto& conv = m.Node("Conv", {"r2", "w"}, {"c"});
  *conv.add_attribute() = IntsAttr("pads", {1, 1, 1, 1});
  *conv.add_attribute() = IntsAttr("strides", {2, 2});
  m.Node("Relu", {"c"}, {"y"});
  auto graph = Graph::FromProto(m.proto().graph(), {{"", 17}}, "");
  ASSERT_TRUE(graph.ok()) << graph.status();
  Graph& g = **graph;
  ASSERT_EQ(DimsOf(g, "r1"), std::vector<int64_t>({-100}));

  EXPECT_EQ(PropagateStaticShapes(g), 5);
  EXPECT_EQ(DimsOf(g, "r1"), std::vector<int64_t>({2, 2, 4, 4, 4}));
  EXPECT_EQ(DimsOf(g, "t"), std::vector<int64_t>({2, 4, 2, 4, 4}));
  EXPECT_EQ(DimsOf(g, "r2"), std::vector<int64_t>({2, 8, 4, 4}));
  EXPECT_EQ(DimsOf(g, "c"), std::vector<int64_t>({2, 6, 2, 2}));  // (4 + 2 - 3) / 2 + 1
  EXPECT_EQ(DimsOf(g, "y"), std::vector<int64_t>({2, 6, 2, 2}));
  EXPECT_EQ(g.FindValueInfo("y")->type, DataType::kFloat);
  EXPECT_EQ(PropagateStaticShapes(g), 0);  // nothing left to learn
}

// A Reshape whose shape is computed at run time stops the wave (its output
// and the Relu after it stay unknown); a Concat whose inputs disagree off its
// axis is rejected by the inference and left alone, without stopping the pass.
TEST(ShapePropagationTest, StopsAtRunTimeShapesAndSkipsRejectedNodes) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {2, 6}).Input("shape", DataType::kInt64, {2});
  m.Output("a", DataType::kFloat, {-1, -1}).Output("b", DataType::kFloat, {-1, -1});
  m.Output("c", DataType::kFloat, {-1, -1});
  m.Initializer("z", RandomFloatTensor({3, 6}, 2));
  m.Node("Reshape", {"x", "shape"}, {"r"});
  m.Node("Relu", {"r"}, {"a"});
  *m.Node("Concat", {"x", "z"}, {"b"}).add_attribute() = IntAttr("axis", 1);
  m.Node("Sigmoid", {"x"}, {"c"});
  auto graph = Graph::FromProto(m.proto().graph(), {{"", 17}}, "");
  ASSERT_TRUE(graph.ok()) << graph.status();
  Graph& g = **graph;
  const int changed = PropagateStaticShapes(g);
  const ValueInfo* r = g.FindValueInfo("r");
  if (r != nullptr && r->has_shape) {
    for (int64_t d : r->dims) EXPECT_LT(d, 0) << "a run-time shape cannot be static";
  }
  const ValueInfo* a = g.FindValueInfo("a");
  EXPECT_TRUE(a == nullptr || !a->has_shape || a->dims != std::vector<int64_t>({2, 6}));
  EXPECT_EQ(DimsOf(g, "c"), std::vector<int64_t>({2, 6}));
  EXPECT_EQ(DimsOf(g, "b"), std::vector<int64_t>({-1, -1}));  // as declared: 2 rows against 3
  EXPECT_GE(changed, 1);
}

TEST(ShapePropagationTest, RefinesShapeOnlyAgreeingMoreStaticShapes) {
  auto info = [](std::vector<int64_t> dims, DataType type = DataType::kFloat) {
    ValueInfo v;
    v.type = type;
    v.has_shape = true;
    v.dims = std::move(dims);
    return v;
  };
  ValueInfo unknown;
  unknown.type = DataType::kFloat;
  EXPECT_TRUE(RefinesShape(unknown, info({2, 3})));
  EXPECT_TRUE(RefinesShape(info({-1, 3}), info({2, 3})));
  EXPECT_FALSE(RefinesShape(info({2, 3}), info({2, 3})));   // nothing new
  EXPECT_FALSE(RefinesShape(info({-1, 3}), info({2, 4})));  // disagrees
  EXPECT_FALSE(RefinesShape(info({-1, 3}), info({2, 3, 1})));
  EXPECT_FALSE(RefinesShape(info({-1, 3}), info({2, 3}, DataType::kInt64)));
}

}  // namespace
}  // namespace onyx
