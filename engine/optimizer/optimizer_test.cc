// Each pass: the rewritten graph has the expected op histogram, and its outputs
// equal the unoptimised graph's on random inputs (within 1e-5 relative).
#include <cmath>
#include <functional>

#include "gtest/gtest.h"
#include "onyx/session.h"
#include "optimizer/optimizer_test_util.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::CompareLevels;
using testing::Count;
using testing::FloatAttr;
using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;
using testing::Total;

TEST(OptimizerTest, EliminatesInferenceDropout) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {2, 3});
  m.Node("Dropout", {"x"}, {"d"});
  m.Node("Relu", {"d"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 3}, 1))}});
  EXPECT_EQ(Count(c.before, "Dropout"), 1);
  EXPECT_EQ(Count(c.after, "Dropout"), 0);
}

TEST(OptimizerTest, FoldsExporterShapeResidue) {
  // Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])) with a static x.
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 3, 4}).Output("y", DataType::kFloat, {2, 12});
  m.Initializer("zero", Int64Tensor({}, {0}));
  m.Initializer("axes0", Int64Tensor({1}, {0}));
  m.Initializer("minus_one", Int64Tensor({1}, {-1}));
  m.Node("Shape", {"x"}, {"shape"});
  m.Node("Gather", {"shape", "zero"}, {"batch"});
  m.Node("Unsqueeze", {"batch", "axes0"}, {"batch1"});
  m.Node("Concat", {"batch1", "minus_one"}, {"target"}).add_attribute()->CopyFrom(testing::IntAttr("axis", 0));
  m.Node("Reshape", {"x", "target"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 3, 4}, 2))}});
  EXPECT_EQ(Total(c.before), 5);
  EXPECT_EQ(Total(c.after), 1);
  EXPECT_EQ(Count(c.after, "Reshape"), 1);
}

// Two channel shuffles as torch exports them (the group size computed with a
// Div from the input's shape, which ONNX's inference does not propagate), a
// Conv + Relu between them (fused into a com.onyx operator ONNX has no schema
// for). The first block's shape folds at once; the second's only after the
// first Reshape's output shape is re-inferred from its now constant shape,
// through the fused node.
TEST(OptimizerTest, FoldsShapeResidueDownAChainOfComputedReshapes) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 4, 3, 3}).Output("y", DataType::kFloat, {1, 4, 3, 3});
  m.Initializer("w", RandomFloatTensor({4, 4, 1, 1}, 7));
  m.Initializer("i0", Int64Tensor({}, {0}));
  m.Initializer("i1", Int64Tensor({}, {1}));
  m.Initializer("two", Int64Tensor({}, {2}));
  m.Initializer("axes0", Int64Tensor({1}, {0}));
  m.Initializer("tail", Int64Tensor({2}, {3, 3}));
  m.Initializer("groups", Int64Tensor({1}, {2}));
  m.Initializer("rest", Int64Tensor({3}, {-1, 3, 3}));
  auto shuffle = [&](const std::string& in, const std::string& out) {
    const std::string p = out + "_";
    m.Node("Shape", {in}, {p + "shape"});
    m.Node("Gather", {p + "shape", "i0"}, {p + "n"});
    m.Node("Gather", {p + "shape", "i1"}, {p + "c"});
    m.Node("Div", {p + "c", "two"}, {p + "per_group"});
    m.Node("Unsqueeze", {p + "n", "axes0"}, {p + "n1"});
    m.Node("Unsqueeze", {p + "per_group", "axes0"}, {p + "g1"});
    *m.Node("Concat", {p + "n1", "groups", p + "g1", "tail"}, {p + "five"}).add_attribute() = IntAttr("axis", 0);
    m.Node("Reshape", {in, p + "five"}, {p + "grouped"});
    *m.Node("Transpose", {p + "grouped"}, {p + "swapped"}).add_attribute() = IntsAttr("perm", {0, 2, 1, 3, 4});
    *m.Node("Concat", {p + "n1", "rest"}, {p + "four"}).add_attribute() = IntAttr("axis", 0);
    m.Node("Reshape", {p + "swapped", p + "four"}, {out});
  };
  shuffle("x", "s1");
  m.Node("Conv", {"s1", "w"}, {"conv"});
  m.Node("Relu", {"conv"}, {"relu"});
  shuffle("relu", "y");
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 4, 3, 3}, 8))}});
  EXPECT_EQ(Count(c.before, "Shape"), 2);
  EXPECT_EQ(Count(c.after, "Shape"), 0);
  EXPECT_EQ(Count(c.after, "Gather"), 0);
  EXPECT_EQ(Count(c.after, "Div"), 0);
  EXPECT_EQ(Count(c.after, "Concat"), 0);
}

TEST(OptimizerTest, RemovesInverseTransposePairsAndNoopCasts) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 3, 4}).Output("y", DataType::kFloat, {2, 3, 4});
  *m.Node("Transpose", {"x"}, {"t1"}).add_attribute() = IntsAttr("perm", {1, 2, 0});
  *m.Node("Transpose", {"t1"}, {"t2"}).add_attribute() = IntsAttr("perm", {2, 0, 1});
  *m.Node("Cast", {"t2"}, {"c"}).add_attribute() = testing::IntAttr("to", 1);
  m.Node("Relu", {"c"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 3, 4}, 3))}});
  EXPECT_EQ(Total(c.before), 4);
  EXPECT_EQ(Total(c.after), 1);
}

// Zero pads (input at opset 13, attribute at opset 2) are an identity; a
// non-zero pad and one whose pads are fed at run time stay.
TEST(OptimizerTest, RemovesPadsThatPadNothing) {
  for (int64_t opset : {2, 13}) {
    ModelBuilder m(opset);
    m.Input("x", DataType::kFloat, {1, 2, 3, 3});
    m.Output("y", DataType::kFloat, {1, 2, 3, 3}).Output("z", DataType::kFloat, {1, 2, 4, 3});
    if (opset >= 11) {
      m.Input("fed", DataType::kInt64, {8}).Output("w", DataType::kFloat, {1, 2, 3, 3});
      m.Initializer("zeros", Int64Tensor({8}, {0, 0, 0, 0, 0, 0, 0, 0}));
      m.Initializer("one_row", Int64Tensor({8}, {0, 0, 1, 0, 0, 0, 0, 0}));
      m.Node("Pad", {"x", "zeros"}, {"p"});
      m.Node("Pad", {"x", "one_row"}, {"z"});
      m.Node("Pad", {"x", "fed"}, {"w"});
    } else {
      *m.Node("Pad", {"x"}, {"p"}).add_attribute() = IntsAttr("pads", {0, 0, 0, 0, 0, 0, 0, 0});
      *m.Node("Pad", {"x"}, {"z"}).add_attribute() = IntsAttr("pads", {0, 0, 1, 0, 0, 0, 0, 0});
    }
    m.Node("Relu", {"p"}, {"y"});
    Feeds feeds = {{"x", Value(RandomFloatTensor({1, 2, 3, 3}, 8))}};
    if (opset >= 11) feeds.push_back({"fed", Value(Int64Tensor({8}, {0, 0, 0, 0, 0, 0, 0, 0}))});
    auto c = CompareLevels(m, feeds, OptimizationLevel::kBasic);
    EXPECT_EQ(Count(c.before, "Pad"), opset >= 11 ? 3 : 2) << opset;
    EXPECT_EQ(Count(c.after, "Pad"), opset >= 11 ? 2 : 1) << opset;
  }
}

TEST(OptimizerTest, CollapsesReshapeChainsAndSqueezePairs) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 6}).Output("y", DataType::kFloat, {3, 4});
  m.Initializer("s1", Int64Tensor({3}, {2, 3, 2}));
  m.Initializer("s2", Int64Tensor({2}, {3, 4}));
  m.Initializer("axes", Int64Tensor({1}, {0}));
  m.Node("Reshape", {"x", "s1"}, {"r1"});
  m.Node("Reshape", {"r1", "s2"}, {"r2"});
  m.Node("Unsqueeze", {"r2", "axes"}, {"u"});
  m.Node("Squeeze", {"u", "axes"}, {"s"});
  m.Node("Relu", {"s"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 6}, 4))}});
  EXPECT_EQ(Total(c.before), 5);
  EXPECT_EQ(Count(c.after, "Reshape"), 1);
  EXPECT_EQ(Count(c.after, "Squeeze") + Count(c.after, "Unsqueeze"), 0);
}

TEST(OptimizerTest, FoldsBatchNormIntoConvAndFusesResidualRelu) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 3, 6, 6}).Output("y", DataType::kFloat, {1, 3, 6, 6});
  m.Initializer("w", RandomFloatTensor({3, 3, 3, 3}, 5));
  m.Initializer("b", RandomFloatTensor({3}, 6));
  m.Initializer("gamma", FloatTensor({3}, {1.5f, 0.5f, 2.f}));
  m.Initializer("beta", FloatTensor({3}, {0.1f, -0.2f, 0.3f}));
  m.Initializer("mean", FloatTensor({3}, {0.05f, -0.1f, 0.2f}));
  m.Initializer("var", FloatTensor({3}, {0.9f, 1.1f, 0.5f}));
  *m.Node("Conv", {"x", "w", "b"}, {"c"}, "conv").add_attribute() = IntsAttr("pads", {1, 1, 1, 1});
  m.Node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"bn"});
  m.Node("Add", {"bn", "x"}, {"sum"});
  m.Node("Relu", {"sum"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 3, 6, 6}, 7))}}, OptimizationLevel::kExtended);
  EXPECT_EQ(Total(c.before), 4);
  EXPECT_EQ(Total(c.after), 1);
  EXPECT_EQ(Count(c.after, "FusedConv"), 1);
}

// Conv followed by each activation the fused convolution runs as a post-op
// (and by a residual Add without one): one FusedConv, same values.
TEST(OptimizerTest, FusesConvActivations) {
  struct Tail {
    const char* name;
    std::function<void(ModelBuilder&)> build;  // reads "c", writes "y"
    int64_t nodes_before;
  };
  const std::vector<Tail> tails =
      {
          {"relu6",
           [](ModelBuilder& m) {
    m.Initializer("lo", FloatTensor({}, {0.f}));
    m.Initializer("hi", FloatTensor({}, {0.75f}));
    m.Node("Clip", {"c", "lo", "hi"}, {"y"});
           },
           2},
          {"leaky",
           [](ModelBuilder& m) { *m.Node("LeakyRelu", {"c"}, {"y"}).add_attribute() = FloatAttr("alpha", 0.2f); }, 2},
          {"sigmoid", [](ModelBuilder& m) { m.Node("Sigmoid", {"c"}, {"y"}); }, 2},
          {"hard_swish", [](ModelBuilder& m) { m.Node("HardSwish", {"c"}, {"y"}); }, 2},
          {"hard_sigmoid",
           [](ModelBuilder& m) {
    auto& n = m.Node("HardSigmoid", {"c"}, {"y"});
    *n.add_attribute() = FloatAttr("alpha", 0.3f);
    *n.add_attribute() = FloatAttr("beta", 0.4f);
           },
           2},
                          {"silu",
                           [](ModelBuilder& m) {
    m.Node("Sigmoid", {"c"}, {"s"});
    m.Node("Mul", {"s", "c"}, {"y"});
                           },
                           3},
      {"residual_only",
       [](ModelBuilder& m) {
    m.Node("Add", {"x", "c"}, {"y"});
       },
       2},
      };
  for (const Tail& tail : tails) {
    SCOPED_TRACE(tail.name);
    ModelBuilder m(14);  // HardSwish is opset 14
    m.Input("x", DataType::kFloat, {1, 4, 5, 5}).Output("y", DataType::kFloat, {1, 4, 5, 5});
    m.Initializer("w", RandomFloatTensor({4, 1, 3, 3}, 11));
    m.Initializer("b", RandomFloatTensor({4}, 12));
    auto& conv = m.Node("Conv", {"x", "w", "b"}, {"c"}, "dw");
    *conv.add_attribute() = IntsAttr("pads", {1, 1, 1, 1});
    *conv.add_attribute() = IntAttr("group", 4);
    tail.build(m);
    auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 4, 5, 5}, 13))}}, OptimizationLevel::kExtended);
    EXPECT_EQ(Total(c.before), tail.nodes_before);
    EXPECT_EQ(Total(c.after), 1);
    EXPECT_EQ(Count(c.after, "FusedConv"), 1);
  }
}

// Clip with a bound computed at run time stays a separate node.
TEST(OptimizerTest, KeepsClipWithRuntimeBounds) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 2, 4, 4}).Input("hi", DataType::kFloat, {});
  m.Output("y", DataType::kFloat, {1, 2, 4, 4});
  m.Initializer("w", RandomFloatTensor({2, 2, 1, 1}, 21));
  m.Node("Conv", {"x", "w"}, {"c"});
  m.Node("Clip", {"c", "", "hi"}, {"y"});
  auto c =
      CompareLevels(m, {{"x", Value(RandomFloatTensor({1, 2, 4, 4}, 22))}, {"hi", Value(FloatTensor({}, {0.25f}))}});
  EXPECT_EQ(Count(c.after, "Clip"), 1);
  EXPECT_EQ(Count(c.after, "FusedConv"), 0);
}

TEST(OptimizerTest, FusesMatMulAddForBatchedInputs) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 5, 8}).Output("y", DataType::kFloat, {2, 5, 4});
  m.Initializer("w", RandomFloatTensor({8, 4}, 8));
  m.Initializer("b", RandomFloatTensor({4}, 9));
  m.Node("MatMul", {"x", "w"}, {"xw"});
  m.Node("Add", {"xw", "b"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 5, 8}, 10))}});
  EXPECT_EQ(Total(c.after), 1);
  EXPECT_EQ(Count(c.after, "FusedMatMul"), 1);
  // Basic level keeps the pair.
  auto basic = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 5, 8}, 10))}}, OptimizationLevel::kBasic);
  EXPECT_EQ(Count(basic.after, "MatMul"), 1);
}

// An exporter's dynamic Reshape (its shape computed at run time) hides the
// product's input shape: a [N] bias still fuses, a [1, N] bias (which could
// add a dimension to a 1-D product) does not.
TEST(OptimizerTest, FusesMatMulAddBehindADynamicReshapeOnlyWithARowBias) {
  for (bool row_bias : {true, false}) {
    ModelBuilder m(13);
    m.Input("x", DataType::kFloat, {6, 8}).Input("shape", DataType::kInt64, {3});
    m.Output("y", DataType::kFloat, {-1, -1, 4});
    m.Initializer("w", RandomFloatTensor({8, 4}, 8));
    m.Initializer("b", RandomFloatTensor(row_bias ? std::vector<int64_t>{4} : std::vector<int64_t>{1, 4}, 9));
    m.Node("Reshape", {"x", "shape"}, {"r"});
    m.Node("MatMul", {"r", "w"}, {"rw"});
    m.Node("Add", {"rw", "b"}, {"y"});
    auto c =
        CompareLevels(m, {{"x", Value(RandomFloatTensor({6, 8}, 10))}, {"shape", Value(Int64Tensor({3}, {2, 3, 8}))}});
    EXPECT_EQ(Count(c.after, "FusedMatMul"), row_bias ? 1 : 0) << "row bias " << row_bias;
    EXPECT_EQ(Count(c.after, "MatMul"), row_bias ? 0 : 1) << "row bias " << row_bias;
  }
}

TEST(OptimizerTest, FusesGemmRelu) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {5, 8}).Output("y", DataType::kFloat, {5, 4});
  m.Initializer("w", RandomFloatTensor({4, 8}, 12));
  m.Initializer("b", RandomFloatTensor({4}, 13));
  *m.Node("Gemm", {"x", "w", "b"}, {"g"}, "fc").add_attribute() = testing::IntAttr("transB", 1);
  m.Node("Relu", {"g"}, {"y"});
  // Random inputs put about half of the products below zero: the comparison
  // with the unfused graph checks the clamping, not only the product.
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({5, 8}, 14))}});
  EXPECT_EQ(Total(c.before), 2);
  EXPECT_EQ(Total(c.after), 1);
  EXPECT_EQ(Count(c.after, "FusedGemm"), 1);
}

TEST(OptimizerTest, FusesReluIntoFusedMatMul) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 3, 8}).Output("y", DataType::kFloat, {2, 3, 4});
  m.Initializer("w", RandomFloatTensor({8, 4}, 15));
  m.Initializer("b", RandomFloatTensor({4}, 16));
  m.Node("MatMul", {"x", "w"}, {"xw"});
  m.Node("Add", {"xw", "b"}, {"a"});
  m.Node("Relu", {"a"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 3, 8}, 17))}});
  EXPECT_EQ(Total(c.before), 3);
  EXPECT_EQ(Total(c.after), 1);
  EXPECT_EQ(Count(c.after, "FusedMatMul"), 1);
}

TEST(OptimizerTest, KeepsReluWhenTheProductHasAnotherReader) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {3, 4}).Output("y", DataType::kFloat, {3, 4}).Output("g", DataType::kFloat, {3, 4});
  m.Initializer("w", RandomFloatTensor({4, 4}, 18));
  m.Node("Gemm", {"x", "w"}, {"g"});
  m.Node("Relu", {"g"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({3, 4}, 19))}});
  EXPECT_EQ(Count(c.after, "Relu"), 1);
  EXPECT_EQ(Count(c.after, "FusedGemm"), 0);
}

TEST(OptimizerTest, LeavesOpset6BroadcastAddUnfused) {
  // Add-6 with broadcast = 1, axis = 0 adds b[i] to row i: a column bias that
  // FusedMatMul (a row bias) must not absorb, although b has N elements.
  ModelBuilder m(6);
  m.Input("x", DataType::kFloat, {4, 4}).Output("y", DataType::kFloat, {4, 4});
  m.Initializer("w", RandomFloatTensor({4, 4}, 20));
  m.Initializer("b", FloatTensor({4}, {1.f, 10.f, 100.f, 1000.f}));
  m.Node("MatMul", {"x", "w"}, {"xw"});
  onnx::NodeProto& add = m.Node("Add", {"xw", "b"}, {"y"});
  *add.add_attribute() = testing::IntAttr("broadcast", 1);
  *add.add_attribute() = testing::IntAttr("axis", 0);
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({4, 4}, 21))}});
  EXPECT_EQ(Count(c.after, "FusedMatMul"), 0);
  EXPECT_EQ(Count(c.after, "Add"), 1);
}

TEST(OptimizerTest, FusesErfGelu) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {4, 8}).Output("y", DataType::kFloat, {4, 8});
  m.Initializer("sqrt2", FloatTensor({}, {1.4142135f}));
  m.Initializer("one", FloatTensor({}, {1.f}));
  m.Initializer("half", FloatTensor({}, {0.5f}));
  m.Node("Div", {"x", "sqrt2"}, {"d"});
  m.Node("Erf", {"d"}, {"e"});
  m.Node("Add", {"e", "one"}, {"a"});
  m.Node("Mul", {"x", "a"}, {"m"});
  m.Node("Mul", {"m", "half"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({4, 8}, 11))}});
  EXPECT_EQ(Total(c.before), 5);
  EXPECT_EQ(Total(c.after), 1);
  EXPECT_EQ(Count(c.after, "Gelu"), 1);
}

// A transformer MLP's first half: MatMul + bias + erf GELU is one node.
TEST(OptimizerTest, FusesGeluIntoFusedMatMul) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 5, 8}).Output("y", DataType::kFloat, {2, 5, 6});
  m.Initializer("w", RandomFloatTensor({8, 6}, 31));
  m.Initializer("b", RandomFloatTensor({6}, 32));
  m.Initializer("sqrt2", FloatTensor({}, {1.4142135f}));
  m.Initializer("one", FloatTensor({}, {1.f}));
  m.Initializer("half", FloatTensor({}, {0.5f}));
  m.Node("MatMul", {"x", "w"}, {"xw"});
  m.Node("Add", {"xw", "b"}, {"h"});
  m.Node("Div", {"h", "sqrt2"}, {"d"});
  m.Node("Erf", {"d"}, {"e"});
  m.Node("Add", {"e", "one"}, {"a"});
  m.Node("Mul", {"h", "a"}, {"g"});
  m.Node("Mul", {"g", "half"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 5, 8}, 33))}});
  EXPECT_EQ(Total(c.before), 7);
  EXPECT_EQ(Total(c.after), 1);
  EXPECT_EQ(Count(c.after, "FusedMatMul"), 1);
}

// Gelu-20's erf form is the same post-op; its tanh form is not and stays.
TEST(OptimizerTest, FusesOpset20ErfGeluIntoFusedMatMul) {
  for (const char* approximate : {"none", "tanh"}) {
    ModelBuilder m(20);
    m.Input("x", DataType::kFloat, {2, 5, 8}).Output("y", DataType::kFloat, {2, 5, 6});
    m.Initializer("w", RandomFloatTensor({8, 6}, 34));
    m.Initializer("b", RandomFloatTensor({6}, 35));
    m.Node("MatMul", {"x", "w"}, {"xw"});
    m.Node("Add", {"xw", "b"}, {"h"});
    *m.Node("Gelu", {"h"}, {"y"}).add_attribute() = testing::StringAttr("approximate", approximate);
    auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 5, 8}, 36))}});
    const bool erf = std::string(approximate) == "none";
    EXPECT_EQ(Total(c.after), erf ? 1 : 2) << approximate;
    EXPECT_EQ(Count(c.after, "Gelu"), erf ? 0 : 1) << approximate;
  }
}

TEST(OptimizerTest, FusesDecomposedLayerNorm) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {3, 16}).Output("y", DataType::kFloat, {3, 16});
  m.Initializer("two", FloatTensor({}, {2.f}));
  m.Initializer("eps", FloatTensor({}, {1e-5f}));
  m.Initializer("gamma", RandomFloatTensor({16}, 12));
  m.Initializer("beta", RandomFloatTensor({16}, 13));
  *m.Node("ReduceMean", {"x"}, {"mean"}).add_attribute() = IntsAttr("axes", {-1});
  m.Node("Sub", {"x", "mean"}, {"d"});
  m.Node("Pow", {"d", "two"}, {"p"});
  *m.Node("ReduceMean", {"p"}, {"var"}).add_attribute() = IntsAttr("axes", {-1});
  m.Node("Add", {"var", "eps"}, {"ve"});
  m.Node("Sqrt", {"ve"}, {"s"});
  m.Node("Div", {"d", "s"}, {"n"});
  m.Node("Mul", {"n", "gamma"}, {"g"});
  m.Node("Add", {"g", "beta"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({3, 16}, 14))}});
  EXPECT_EQ(Total(c.before), 9);
  EXPECT_EQ(Total(c.after), 1);
  EXPECT_EQ(Count(c.after, "LayerNormalization"), 1);
}

// The same pattern behind a dynamic Reshape (x's shape unknown to the
// optimizer): fused, the kernel checks gamma's length at run time.
TEST(OptimizerTest, FusesDecomposedLayerNormBehindADynamicReshape) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {3, 16}).Input("shape", DataType::kInt64, {3});
  m.Output("y", DataType::kFloat, {-1, -1, 8});
  m.Initializer("two", FloatTensor({}, {2.f}));
  m.Initializer("eps", FloatTensor({}, {1e-5f}));
  m.Initializer("gamma", RandomFloatTensor({8}, 12));
  m.Initializer("beta", RandomFloatTensor({8}, 13));
  m.Node("Reshape", {"x", "shape"}, {"r"});
  *m.Node("ReduceMean", {"r"}, {"mean"}).add_attribute() = IntsAttr("axes", {-1});
  m.Node("Sub", {"r", "mean"}, {"d"});
  m.Node("Pow", {"d", "two"}, {"p"});
  *m.Node("ReduceMean", {"p"}, {"var"}).add_attribute() = IntsAttr("axes", {-1});
  m.Node("Add", {"var", "eps"}, {"ve"});
  m.Node("Sqrt", {"ve"}, {"s"});
  m.Node("Div", {"d", "s"}, {"n"});
  m.Node("Mul", {"n", "gamma"}, {"g"});
  m.Node("Add", {"g", "beta"}, {"y"});
  auto c =
      CompareLevels(m, {{"x", Value(RandomFloatTensor({3, 16}, 14))}, {"shape", Value(Int64Tensor({3}, {2, 3, 8}))}});
  EXPECT_EQ(Count(c.after, "LayerNormalization"), 1);
  EXPECT_EQ(Count(c.after, "Pow"), 0);
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

// x_q [1, 2, 1, 2] = {10, 20; 30, 40} (scale 0.5, zero point 10), int8 weights
// {-1, 2} (scale 0.25), int32 bias 8 (scale 0.125), then Relu and
// QuantizeLinear (scale 0.5, zero point `y_zero_point`).
testing::ModelBuilder QdqConv(uint8_t y_zero_point) {
  ModelBuilder m(13);
  m.Input("xq", DataType::kUint8, {1, 2, 1, 2}).Output("yq", DataType::kUint8, {1, 1, 1, 2});
  auto scalar = [&](const char* name, DataType type, double v) {
    Tensor t = Tensor::Allocate(type, {});
    if (type == DataType::kFloat) t.mutable_data<float>()[0] = static_cast<float>(v);
    if (type == DataType::kUint8) t.mutable_data<uint8_t>()[0] = static_cast<uint8_t>(v);
    if (type == DataType::kInt8) t.mutable_data<int8_t>()[0] = static_cast<int8_t>(v);
    m.Initializer(name, t);
  };
  scalar("xs", DataType::kFloat, 0.5);
  scalar("xz", DataType::kUint8, 10);
  scalar("ws", DataType::kFloat, 0.25);
  scalar("wz", DataType::kInt8, 0);
  scalar("bs", DataType::kFloat, 0.125);
  scalar("ys", DataType::kFloat, 0.5);
  scalar("yz", DataType::kUint8, y_zero_point);
  Tensor w = Tensor::Allocate(DataType::kInt8, {1, 2, 1, 1});
  w.mutable_data<int8_t>()[0] = -1;
  w.mutable_data<int8_t>()[1] = 2;
  m.Initializer("wq", w);
  Tensor b = Tensor::Allocate(DataType::kInt32, {1});
  b.mutable_data<int32_t>()[0] = 8;
  m.Initializer("bq", b);
  m.Node("DequantizeLinear", {"xq", "xs", "xz"}, {"x"});
  m.Node("DequantizeLinear", {"wq", "ws", "wz"}, {"w"});
  m.Node("DequantizeLinear", {"bq", "bs"}, {"b"});
  m.Node("Conv", {"x", "w", "b"}, {"c"});
  m.Node("Relu", {"c"}, {"r"});
  m.Node("QuantizeLinear", {"r", "ys", "yz"}, {"yq"});
  return m;
}

std::vector<uint8_t> RunQdq(const ModelBuilder& m, std::map<std::string, int64_t>* histogram) {
  auto session = InferenceSession::CreateFromBytes(m.Serialize(), SessionOptions());
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  Tensor x = Tensor::Allocate(DataType::kUint8, {1, 2, 1, 2});
  const uint8_t values[4] = {10, 20, 30, 40};
  std::copy(values, values + 4, x.mutable_data<uint8_t>());
  auto y = (*session)->Run(RunOptions(), {{"xq", Value(x)}}, {"yq"});
  EXPECT_TRUE(y.ok()) << y.status();
  if (!y.ok()) return {};
  *histogram = (*session)->op_histogram();
  const Tensor& t = (*y)[0].tensor();
  return std::vector<uint8_t>(t.data<uint8_t>(), t.data<uint8_t>() + t.num_elements());
}

TEST(FuseQdqConvTest, QuantizedConvGroupRunsAsQLinearConv) {
  // int32 sums (x_q - 10) * w_q: {0*-1 + 20*2, 10*-1 + 30*2} = {40, 50}, + 8
  // = {48, 58}, * (0.5 * 0.25 / 0.5) = {12, 14.5}: 12 and 14 (half to even).
  std::map<std::string, int64_t> h;
  EXPECT_EQ(RunQdq(QdqConv(0), &h), (std::vector<uint8_t>{12, 14}));
  EXPECT_EQ(Count(h, "QLinearConv"), 1);
  EXPECT_EQ(Count(h, "Conv") + Count(h, "NhwcConv") + Count(h, "FusedConv"), 0);
  EXPECT_EQ(Count(h, "Relu") + Count(h, "DequantizeLinear") + Count(h, "QuantizeLinear"), 0);
}

TEST(FuseQdqConvTest, ReluThatQuantizationDoesNotImplyStays) {
  // With zero point 5 the Relu clamps values the quantization would keep:
  // no fusion, and the float path gives {12 + 5, 14.5 -> 14 + 5}.
  std::map<std::string, int64_t> h;
  EXPECT_EQ(RunQdq(QdqConv(5), &h), (std::vector<uint8_t>{17, 19}));
  EXPECT_EQ(Count(h, "QLinearConv"), 0);
}

TEST(FuseQdqMatMulTest, QuantizedMatMulGroupRunsAsQLinearMatMul) {
  // a_q [1, 2] = {12, 14} (scale 0.5, zero point 10) times int8 B [2, 2] =
  // {1, -2; 3, 4} (scale 0.25): int32 {2*1 + 4*3, 2*-2 + 4*4} = {14, 12},
  // * (0.5 * 0.25 / 0.25) = {7, 6}, + zero point 100 = {107, 106}.
  ModelBuilder m(13);
  m.Input("aq", DataType::kUint8, {1, 2}).Output("yq", DataType::kUint8, {1, 2});
  Tensor b = Tensor::Allocate(DataType::kInt8, {2, 2});
  const int8_t bv[4] = {1, -2, 3, 4};
  std::copy(bv, bv + 4, b.mutable_data<int8_t>());
  m.Initializer("bq", b);
  auto scalar = [&](const char* name, DataType type, double v) {
    Tensor t = Tensor::Allocate(type, {});
    if (type == DataType::kFloat) t.mutable_data<float>()[0] = static_cast<float>(v);
    if (type == DataType::kUint8) t.mutable_data<uint8_t>()[0] = static_cast<uint8_t>(v);
    m.Initializer(name, t);
  };
  scalar("as", DataType::kFloat, 0.5);
  scalar("az", DataType::kUint8, 10);
  scalar("bs", DataType::kFloat, 0.25);
  scalar("ys", DataType::kFloat, 0.25);
  scalar("yz", DataType::kUint8, 100);
  m.Node("DequantizeLinear", {"aq", "as", "az"}, {"a"});
  m.Node("DequantizeLinear", {"bq", "bs"}, {"b"});
  m.Node("MatMul", {"a", "b"}, {"y"});
  m.Node("QuantizeLinear", {"y", "ys", "yz"}, {"yq"});
  auto session = InferenceSession::CreateFromBytes(m.Serialize(), SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  Tensor a = Tensor::Allocate(DataType::kUint8, {1, 2});
  a.mutable_data<uint8_t>()[0] = 12;
  a.mutable_data<uint8_t>()[1] = 14;
  auto y = (*session)->Run(RunOptions(), {{"aq", Value(a)}}, {"yq"});
  ASSERT_TRUE(y.ok()) << y.status();
  const Tensor& t = (*y)[0].tensor();
  EXPECT_EQ(std::vector<uint8_t>(t.data<uint8_t>(), t.data<uint8_t>() + 2), (std::vector<uint8_t>{107, 106}));
  const auto h = (*session)->op_histogram();
  EXPECT_EQ(Count(h, "QLinearMatMul"), 1);
  EXPECT_EQ(Count(h, "MatMul") + Count(h, "DequantizeLinear") + Count(h, "QuantizeLinear"), 0);
}

}  // namespace
}  // namespace onyx
