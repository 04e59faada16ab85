// SplitConvOverConcat: a channels-last Concat read only by a pool or a
// convolution is never written, and the split graph computes what the
// unoptimised one does; the Concats it must leave.
#include "gtest/gtest.h"
#include "optimizer/optimizer_test_util.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::CompareLevels;
using testing::Count;
using testing::FloatAttr;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;

Feeds Image(int64_t channels, int64_t size, int seed) {
  return {{"x", Value(RandomFloatTensor({2, channels, size, size}, seed))}};
}

// SqueezeNet's fire modules: a squeeze convolution, expand 1x1 and 3x3
// convolutions of it concatenated (5 + 6 channels), then `reader`:
// "pool" (a ceil-mode MaxPool, then a fire's squeeze convolution of 3
// channels), "conv" (that squeeze alone) or "wide" (a convolution of 12
// channels, more than the partial sums save).
ModelBuilder Fire(const std::string& reader) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 8, 10, 10});
  const int64_t out_channels = reader == "wide" ? 12 : 3, out_size = reader == "pool" ? 5 : 10;
  m.Output("y", DataType::kFloat, {2, out_channels, out_size, out_size});
  m.Initializer("ws", RandomFloatTensor({4, 8, 1, 1}, 1)).Initializer("bs", RandomFloatTensor({4}, 2));
  m.Initializer("w1", RandomFloatTensor({5, 4, 1, 1}, 3)).Initializer("b1", RandomFloatTensor({5}, 4));
  m.Initializer("w3", RandomFloatTensor({6, 4, 3, 3}, 5)).Initializer("b3", RandomFloatTensor({6}, 6));
  m.Initializer("wn", RandomFloatTensor({out_channels, 11, 1, 1}, 7));
  m.Initializer("bn", RandomFloatTensor({out_channels}, 8));
  m.Node("Conv", {"x", "ws", "bs"}, {"s0"});
  m.Node("Relu", {"s0"}, {"s"});
  m.Node("Conv", {"s", "w1", "b1"}, {"e1"});
  *m.Node("Conv", {"s", "w3", "b3"}, {"e3"}).add_attribute() = IntsAttr("pads", {1, 1, 1, 1});
  *m.Node("Concat", {"e1", "e3"}, {"cat"}).add_attribute() = IntAttr("axis", 1);
  std::string next = "cat";
  if (reader == "pool") {
    auto& pool = m.Node("MaxPool", {"cat"}, {"pooled"});
    *pool.add_attribute() = IntsAttr("kernel_shape", {3, 3});
    *pool.add_attribute() = IntsAttr("strides", {2, 2});
    *pool.add_attribute() = IntAttr("ceil_mode", 1);
    next = "pooled";
  }
  m.Node("Conv", {next, "wn", "bn"}, {"z"});
  // LeakyRelu is not linear: applied to a partial sum, it would show.
  *m.Node("LeakyRelu", {"z"}, {"y"}).add_attribute() = FloatAttr("alpha", 0.1f);
  return m;
}

TEST(SplitConvOverConcatTest, ConvolutionReadsTheConcatenatedInputsInPlace) {
  auto c = CompareLevels(Fire("conv"), Image(8, 10, 9), OptimizationLevel::kAll, /*runs=*/2);
  EXPECT_EQ(Count(c.after, "Concat"), 0);
  // squeeze, two expands, and the reader's two parts
  EXPECT_EQ(Count(c.after, "NhwcConv"), 5);
  EXPECT_EQ(Count(c.after, "LeakyRelu"), 0);
}

TEST(SplitConvOverConcatTest, PoolOfAConcatenationIsAConcatenationOfPools) {
  auto c = CompareLevels(Fire("pool"), Image(8, 10, 9), OptimizationLevel::kAll, /*runs=*/2);
  EXPECT_EQ(Count(c.after, "NhwcMaxPool"), 2);
  EXPECT_EQ(Count(c.after, "Concat"), 0);  // the pooled Concat's convolution split too
  EXPECT_EQ(Count(c.after, "NhwcConv"), 5);
}

TEST(SplitConvOverConcatTest, WideConvolutionKeepsItsConcat) {
  // 12 output channels against 11 concatenated: the partial sum would move
  // more than the Concat.
  auto c = CompareLevels(Fire("wide"), Image(8, 10, 9));
  EXPECT_EQ(Count(c.after, "Concat"), 1);
  EXPECT_EQ(Count(c.after, "NhwcConv"), 4);
}

// Three inputs of odd widths (3, 5, 7 channels), a strided, padded 3x3
// convolution with a residual-free Clip, and an AveragePool over another
// Concat; a Concat read twice and a grouped convolution stay.
TEST(SplitConvOverConcatTest, ThreeInputsStridedConvolutionAndAveragePool) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 6, 10, 10});
  m.Output("y", DataType::kFloat, {2, 4, 5, 5});
  m.Output("p", DataType::kFloat, {2, 8, 5, 5});
  m.Output("g", DataType::kFloat, {2, 8, 10, 10});
  m.Output("cat3", DataType::kFloat, {2, 8, 10, 10});
  m.Initializer("wa", RandomFloatTensor({3, 6, 1, 1}, 1)).Initializer("wb", RandomFloatTensor({5, 6, 3, 3}, 2));
  m.Initializer("wc", RandomFloatTensor({7, 6, 1, 1}, 3)).Initializer("wy", RandomFloatTensor({4, 15, 3, 3}, 4));
  m.Initializer("by", RandomFloatTensor({4}, 5)).Initializer("wg", RandomFloatTensor({8, 4, 1, 1}, 6));
  m.Node("Conv", {"x", "wa"}, {"a"});
  *m.Node("Conv", {"x", "wb"}, {"b"}).add_attribute() = IntsAttr("pads", {1, 1, 1, 1});
  m.Node("Conv", {"x", "wc"}, {"c"});
  *m.Node("Concat", {"a", "b", "c"}, {"cat"}).add_attribute() = IntAttr("axis", 1);
  auto& conv = m.Node("Conv", {"cat", "wy", "by"}, {"z"});
  *conv.add_attribute() = IntsAttr("pads", {1, 0, 0, 1});
  *conv.add_attribute() = IntsAttr("strides", {2, 2});
  m.Initializer("lo", testing::FloatTensor({}, {-0.5f})).Initializer("hi", testing::FloatTensor({}, {0.75f}));
  m.Node("Clip", {"z", "lo", "hi"}, {"y"});
  *m.Node("Concat", {"a", "b"}, {"ab"}).add_attribute() = IntAttr("axis", 1);
  auto& pool = m.Node("AveragePool", {"ab"}, {"p"});
  *pool.add_attribute() = IntsAttr("kernel_shape", {2, 2});
  *pool.add_attribute() = IntsAttr("strides", {2, 2});
  // Read by a graph output and by a convolution: stays.
  *m.Node("Concat", {"a", "b"}, {"cat3"}).add_attribute() = IntAttr("axis", 1);
  *m.Node("Conv", {"cat3", "wg"}, {"g"}).add_attribute() = IntAttr("group", 2);
  auto c = CompareLevels(m, Image(6, 10, 11), OptimizationLevel::kAll, /*runs=*/2);
  EXPECT_EQ(Count(c.after, "Concat"), 2);  // the pooled one and cat3
  EXPECT_EQ(Count(c.after, "NhwcAveragePool"), 2);
  EXPECT_EQ(Count(c.after, "NhwcConv"), 3 + 3 + 1);
  EXPECT_EQ(Count(c.after, "Clip"), 0);
}

}  // namespace
}  // namespace onyx
