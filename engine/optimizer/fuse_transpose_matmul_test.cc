// FuseTransposeMatMul: which Transposes and scales fold into TransposedMatMul,
// and that the folded graph computes what the unoptimised one does.
#include "gtest/gtest.h"
#include "optimizer/optimizer_test_util.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::CompareLevels;
using testing::Count;
using testing::FloatTensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;

// A Hugging Face self-attention core on [batch, seq, heads, head_dim]
// projections: the head split of Q and V, K's split then its transpose (two
// Transposes, as exporters write them), the 1/sqrt(d) scale, the mask Add,
// Softmax, and the head merge.
TEST(FuseTransposeMatMulTest, AttentionCoreRunsWithoutItsTransposesAndScale) {
  const std::vector<int64_t> dims = {2, 5, 3, 4};
  ModelBuilder m(17);
  m.Input("q", DataType::kFloat, dims).Input("k", DataType::kFloat, dims).Input("v", DataType::kFloat, dims);
  m.Input("mask", DataType::kFloat, {2, 1, 1, 5}).Output("y", DataType::kFloat, dims);
  m.Initializer("scale", FloatTensor({}, {2.f}));
  *m.Node("Transpose", {"q"}, {"qh"}).add_attribute() = IntsAttr("perm", {0, 2, 1, 3});
  *m.Node("Transpose", {"k"}, {"kh"}).add_attribute() = IntsAttr("perm", {0, 2, 1, 3});
  *m.Node("Transpose", {"kh"}, {"kt"}).add_attribute() = IntsAttr("perm", {0, 1, 3, 2});
  *m.Node("Transpose", {"v"}, {"vh"}).add_attribute() = IntsAttr("perm", {0, 2, 1, 3});
  m.Node("MatMul", {"qh", "kt"}, {"scores"});
  m.Node("Div", {"scores", "scale"}, {"scaled"});
  m.Node("Add", {"scaled", "mask"}, {"masked"});
  *m.Node("Softmax", {"masked"}, {"probs"}).add_attribute() = IntAttr("axis", -1);
  m.Node("MatMul", {"probs", "vh"}, {"context"});
  *m.Node("Transpose", {"context"}, {"y"}).add_attribute() = IntsAttr("perm", {0, 2, 1, 3});
  auto c = CompareLevels(m,
                         {{"q", Value(RandomFloatTensor(dims, 1))},
                          {"k", Value(RandomFloatTensor(dims, 2))},
                          {"v", Value(RandomFloatTensor(dims, 3))},
                          {"mask", Value(RandomFloatTensor({2, 1, 1, 5}, 4))}},
                         OptimizationLevel::kAll, /*runs=*/2);
  EXPECT_EQ(Count(c.before, "Transpose"), 5);
  EXPECT_EQ(Count(c.after, "Transpose"), 0);
  EXPECT_EQ(Count(c.after, "Div"), 0);
  EXPECT_EQ(Count(c.after, "MatMul"), 0);
  EXPECT_EQ(Count(c.after, "TransposedMatMul"), 2);
  // The mask Add and the Softmax between the products fold too (FuseMaskedSoftmax).
  EXPECT_EQ(Count(c.after, "MaskedSoftmax"), 1);
  EXPECT_EQ(Count(c.after, "Add") + Count(c.after, "Softmax"), 0);
}

// A rank-4 operand times a computed rank-2 one (batch broadcasting), the
// 2-D one transposed by a Transpose without perm (axes reversed), scaled by
// a constant Mul on the left.
TEST(FuseTransposeMatMulTest, BroadcastOperandAndReversedTransposeFold) {
  ModelBuilder m(13);
  m.Input("a", DataType::kFloat, {2, 3, 4, 5}).Input("b", DataType::kFloat, {6, 5});
  m.Output("y", DataType::kFloat, {2, 3, 4, 6});
  m.Initializer("half", FloatTensor({1}, {0.5f}));
  m.Node("Relu", {"b"}, {"rb"});
  m.Node("Transpose", {"rb"}, {"bt"});
  m.Node("MatMul", {"a", "bt"}, {"p"});
  m.Node("Mul", {"half", "p"}, {"y"});
  auto c =
      CompareLevels(m, {{"a", Value(RandomFloatTensor({2, 3, 4, 5}, 5))}, {"b", Value(RandomFloatTensor({6, 5}, 6))}});
  EXPECT_EQ(Count(c.after, "TransposedMatMul"), 1);
  EXPECT_EQ(Count(c.after, "Transpose") + Count(c.after, "Mul") + Count(c.after, "MatMul"), 0);
}

// What stays: a Transpose with another reader, one that moves the last axis
// into the batch (no contiguous row or column left), a result Transpose that
// moves the last axis, a non-scalar Mul, and a MatMul with a constant operand.
TEST(FuseTransposeMatMulTest, LeavesTransposesItCannotReadThroughStrides) {
  ModelBuilder m(13);
  m.Input("a", DataType::kFloat, {2, 3, 4}).Input("b", DataType::kFloat, {2, 4, 5});
  m.Input("c", DataType::kFloat, {3, 4, 2}).Output("y1", DataType::kFloat, {5, 3, 2});
  m.Output("y2", DataType::kFloat, {2, 3, 5}).Output("y3", DataType::kFloat, {2, 4, 3});
  m.Output("y4", DataType::kFloat, {2, 3, 3});
  m.Initializer("w", RandomFloatTensor({4, 5}, 7));
  m.Initializer("row", RandomFloatTensor({5}, 8));
  // Shared Transpose: read by the MatMul and by the output y3.
  *m.Node("Transpose", {"a"}, {"y3"}).add_attribute() = IntsAttr("perm", {0, 2, 1});
  m.Node("MatMul", {"a", "y3"}, {"y4"});
  // [3, 4, 2] -> [2, 3, 4]: the last axis becomes the batch axis.
  *m.Node("Transpose", {"c"}, {"ct"}).add_attribute() = IntsAttr("perm", {2, 0, 1});
  m.Node("MatMul", {"ct", "b"}, {"p"});
  m.Node("Mul", {"p", "row"}, {"pr"});
  *m.Node("Transpose", {"pr"}, {"y1"}).add_attribute() = IntsAttr("perm", {2, 1, 0});
  m.Node("MatMul", {"a", "w"}, {"y2"});
  auto c = CompareLevels(m, {{"a", Value(RandomFloatTensor({2, 3, 4}, 9))},
                             {"b", Value(RandomFloatTensor({2, 4, 5}, 10))},
                             {"c", Value(RandomFloatTensor({3, 4, 2}, 11))}});
  EXPECT_EQ(Count(c.after, "Transpose"), 3);
  EXPECT_EQ(Count(c.after, "Mul"), 1);
  EXPECT_EQ(Count(c.after, "TransposedMatMul"), 0);
}

}  // namespace
}  // namespace onyx
