// FuseMaskedSoftmax: which mask Adds fold into the Softmax, and that the
// folded graph computes what the unoptimised one does.
#include "gtest/gtest.h"
#include "optimizer/optimizer_test_util.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::CompareLevels;
using testing::Count;
using testing::IntAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;

// Attention scores [batch, heads, seq, seq] and a padding mask [batch, 1, 1,
// seq], the mask on either side of the Add; the Softmax at opset 13 (axis -1)
// and at opset 11 (axis = the last).
TEST(FuseMaskedSoftmaxTest, PaddingMaskAddFoldsIntoTheSoftmax) {
  for (int64_t opset : {11, 17}) {
    for (bool mask_first : {false, true}) {
      ModelBuilder m(opset);
      m.Input("scores", DataType::kFloat, {2, 3, 5, 5}).Input("mask", DataType::kFloat, {2, 1, 1, 5});
      m.Output("y", DataType::kFloat, {2, 3, 5, 5});
      m.Node("Add",
             mask_first ? std::vector<std::string>{"mask", "scores"} : std::vector<std::string>{"scores", "mask"},
             {"sum"});
      auto& softmax = m.Node("Softmax", {"sum"}, {"y"});
      if (opset < 13) *softmax.add_attribute() = IntAttr("axis", 3);
      Tensor mask = RandomFloatTensor({2, 1, 1, 5}, 2);
      mask.mutable_data<float>()[3] = -10000.f;  // a padded position
      auto c = CompareLevels(m, {{"scores", Value(RandomFloatTensor({2, 3, 5, 5}, 1))}, {"mask", Value(mask)}});
      EXPECT_EQ(Count(c.after, "MaskedSoftmax"), 1) << opset << " " << mask_first;
      EXPECT_EQ(Count(c.after, "Add") + Count(c.after, "Softmax"), 0) << opset << " " << mask_first;
    }
  }
}

// Left alone: a Softmax over another axis, a sum with another reader, and a
// "mask" that would widen the scores (the output shape is not X's).
TEST(FuseMaskedSoftmaxTest, LeavesSumsItCannotFold) {
  ModelBuilder m(17);
  m.Input("a", DataType::kFloat, {2, 4}).Input("b", DataType::kFloat, {2, 4}).Input("c", DataType::kFloat, {3, 1, 4});
  m.Output("y1", DataType::kFloat, {2, 4}).Output("y2", DataType::kFloat, {2, 4});
  m.Output("s2", DataType::kFloat, {2, 4}).Output("y3", DataType::kFloat, {3, 2, 4});
  m.Node("Add", {"a", "b"}, {"s1"});
  *m.Node("Softmax", {"s1"}, {"y1"}).add_attribute() = IntAttr("axis", 0);
  m.Node("Add", {"b", "a"}, {"s2"});
  m.Node("Softmax", {"s2"}, {"y2"});
  m.Node("Add", {"a", "c"}, {"s3"});
  m.Node("Softmax", {"s3"}, {"y3"});
  auto c = CompareLevels(m, {{"a", Value(RandomFloatTensor({2, 4}, 3))},
                             {"b", Value(RandomFloatTensor({2, 4}, 4))},
                             {"c", Value(RandomFloatTensor({3, 1, 4}, 5))}});
  EXPECT_EQ(Count(c.after, "MaskedSoftmax"), 0);
  EXPECT_EQ(Count(c.after, "Softmax"), 3);
}

}  // namespace
}  // namespace onyx
