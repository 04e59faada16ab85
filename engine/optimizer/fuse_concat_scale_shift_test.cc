// FuseConcatScaleShift: DenseNet's Concat -> BatchNormalization (-> Relu)
// after the channels-last rewrite becomes one ConcatScaleShift, and the
// folded graph computes what the unoptimised one does; what must stay.
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

// Two convolutions of x (channels-last from the first Conv on) concatenated
// with x's own first convolution, then BatchNormalization, the activation
// (none, Relu, Sigmoid) and a closing Conv.
ModelBuilder DenseLayer(const std::string& activation, bool second_reader) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 3, 5, 5});
  m.Output("y", DataType::kFloat, {2, 4, 5, 5});
  if (second_reader) m.Output("cat", DataType::kFloat, {2, 10, 5, 5});
  m.Initializer("w0", RandomFloatTensor({4, 3, 1, 1}, 1)).Initializer("w1", RandomFloatTensor({3, 4, 3, 3}, 2));
  m.Initializer("w2", RandomFloatTensor({3, 4, 1, 1}, 3)).Initializer("w3", RandomFloatTensor({4, 10, 1, 1}, 4));
  m.Initializer("gamma", RandomFloatTensor({10}, 5)).Initializer("beta", RandomFloatTensor({10}, 6));
  m.Initializer("mean", RandomFloatTensor({10}, 7));
  m.Initializer("var", FloatTensor({10}, {0.5f, 1.f, 2.f, 0.25f, 1.5f, 0.75f, 1.f, 3.f, 0.1f, 1.f}));
  m.Node("Conv", {"x", "w0"}, {"f0"});
  *m.Node("Conv", {"f0", "w1"}, {"f1"}).add_attribute() = IntsAttr("pads", {1, 1, 1, 1});
  m.Node("Conv", {"f0", "w2"}, {"f2"});
  *m.Node("Concat", {"f0", "f1", "f2"}, {"cat"}).add_attribute() = IntAttr("axis", 1);
  const std::string normalised = activation.empty() ? "act" : "bn";
  m.Node("BatchNormalization", {"cat", "gamma", "beta", "mean", "var"}, {normalised});
  if (!activation.empty()) m.Node(activation, {"bn"}, {"act"});
  m.Node("Conv", {"act", "w3"}, {"y"});
  return m;
}

TEST(FuseConcatScaleShiftTest, NormalisedConcatenationIsOnePass) {
  for (const std::string activation : {"", "Relu"}) {
    auto c = CompareLevels(DenseLayer(activation, false), {{"x", Value(RandomFloatTensor({2, 3, 5, 5}, 9))}},
                           OptimizationLevel::kAll, /*runs=*/2);
    EXPECT_EQ(Count(c.after, "ConcatScaleShift"), 1) << activation;
    EXPECT_EQ(Count(c.after, "Concat") + Count(c.after, "BatchNormalization"), 0) << activation;
    EXPECT_EQ(Count(c.after, "Relu"), 0) << activation;
  }
}

// A Concat read elsewhere too (here a graph output) and a normalisation
// followed by another activation keep their nodes.
TEST(FuseConcatScaleShiftTest, LeavesConcatsItCannotFold) {
  auto read_twice = CompareLevels(DenseLayer("Relu", true), {{"x", Value(RandomFloatTensor({2, 3, 5, 5}, 9))}});
  EXPECT_EQ(Count(read_twice.after, "ConcatScaleShift"), 0);
  EXPECT_EQ(Count(read_twice.after, "Concat"), 1);
  auto sigmoid = CompareLevels(DenseLayer("Sigmoid", false), {{"x", Value(RandomFloatTensor({2, 3, 5, 5}, 9))}});
  EXPECT_EQ(Count(sigmoid.after, "ConcatScaleShift"), 0);
  EXPECT_EQ(Count(sigmoid.after, "Concat"), 1);
}

}  // namespace
}  // namespace onyx
