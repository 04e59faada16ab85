// FuseRecurrentTransposes: the batch-first Transposes around LSTM, GRU and RNN
// fold into the layer, which then computes what the unoptimised graph does
// (Transposes and a layout-0 layer) in every Y order, with sequences that
// end early (zero rows in Y) and on the second run's memory pattern.
#include "gtest/gtest.h"
#include "optimizer/optimizer_test_util.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::CompareLevels;
using testing::Count;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;
using testing::StringAttr;

constexpr int64_t kBatch = 3, kSeq = 5, kInput = 4, kHidden = 6, kDirs = 2;

struct Layer {
  const char* op;
  int64_t gates;
};

// X [batch, seq, input] -> Transpose [1, 0, 2] -> layer -> Transpose(Y, y_perm),
// with Y_h an output too; W, R and B initializers.
ModelBuilder BatchFirstLayer(const Layer& layer, const std::vector<int64_t>& y_perm, bool with_lens) {
  ModelBuilder m(14);
  m.Input("x", DataType::kFloat, {kBatch, kSeq, kInput});
  if (with_lens) m.Input("lens", DataType::kInt32, {kBatch});
  m.Initializer("w", RandomFloatTensor({kDirs, layer.gates * kHidden, kInput}, 11));
  m.Initializer("r", RandomFloatTensor({kDirs, layer.gates * kHidden, kHidden}, 12));
  m.Initializer("b", RandomFloatTensor({kDirs, 2 * layer.gates * kHidden}, 13));
  *m.Node("Transpose", {"x"}, {"xt"}).add_attribute() = IntsAttr("perm", {1, 0, 2});
  auto& node = m.Node(layer.op, {"xt", "w", "r", "b", with_lens ? "lens" : ""}, {"y", "y_h"});
  *node.add_attribute() = IntAttr("hidden_size", kHidden);
  *node.add_attribute() = StringAttr("direction", "bidirectional");
  *m.Node("Transpose", {"y"}, {"yt"}).add_attribute() = IntsAttr("perm", y_perm);
  const std::vector<int64_t> y_dims = {kSeq, kDirs, kBatch, kHidden};
  std::vector<int64_t> yt_dims;
  for (int64_t p : y_perm) yt_dims.push_back(y_dims[p]);
  m.Output("yt", DataType::kFloat, yt_dims).Output("y_h", DataType::kFloat, {kDirs, kBatch, kHidden});
  return m;
}

Feeds LayerFeeds(bool with_lens) {
  Feeds feeds = {{"x", Value(RandomFloatTensor({kBatch, kSeq, kInput}, 7))}};
  if (with_lens) {
    Tensor lens = Tensor::Allocate(DataType::kInt32, {kBatch});
    const int32_t values[kBatch] = {5, 2, 4};
    std::copy(values, values + kBatch, lens.mutable_data<int32_t>());
    feeds.emplace_back("lens", Value(lens));
  }
  return feeds;
}

TEST(FuseRecurrentTransposesTest, BatchFirstTransposesFoldIntoEveryLayer) {
  for (const Layer& layer : {Layer{"LSTM", 4}, Layer{"GRU", 3}, Layer{"RNN", 1}}) {
    for (const std::vector<int64_t>& y_perm : {std::vector<int64_t>{0, 2, 1, 3}, std::vector<int64_t>{2, 0, 1, 3}}) {
      for (bool with_lens : {false, true}) {
        SCOPED_TRACE(::testing::Message() << layer.op << " y_perm " << y_perm[0] << y_perm[1] << y_perm[2] << y_perm[3]
                                          << " lens " << with_lens);
        auto c = CompareLevels(BatchFirstLayer(layer, y_perm, with_lens), LayerFeeds(with_lens),
                               OptimizationLevel::kAll, /*runs=*/2);
        EXPECT_EQ(Count(c.before, "Transpose"), 2);
        EXPECT_EQ(Count(c.after, "Transpose"), 0);
        EXPECT_EQ(Count(c.after, layer.op), 1);
      }
    }
  }
}

// Left alone: an X Transpose with a second reader, a Y Transpose that is not
// one of the layer's orders, and a layer that is batch-major already.
TEST(FuseRecurrentTransposesTest, LeavesTransposesItCannotFold) {
  ModelBuilder m(14);
  m.Input("x", DataType::kFloat, {kBatch, kSeq, kInput});
  m.Initializer("w", RandomFloatTensor({1, 4 * kHidden, kInput}, 11));
  m.Initializer("r", RandomFloatTensor({1, 4 * kHidden, kHidden}, 12));
  *m.Node("Transpose", {"x"}, {"xt"}).add_attribute() = IntsAttr("perm", {1, 0, 2});
  *m.Node("LSTM", {"xt", "w", "r"}, {"y"}).add_attribute() = IntAttr("hidden_size", kHidden);
  *m.Node("Transpose", {"y"}, {"yt"}).add_attribute() = IntsAttr("perm", {1, 0, 2, 3});
  auto& batch_major = m.Node("LSTM", {"x", "w", "r"}, {"y2"});
  *batch_major.add_attribute() = IntAttr("hidden_size", kHidden);
  *batch_major.add_attribute() = IntAttr("layout", 1);
  *m.Node("Transpose", {"y2"}, {"y2t"}).add_attribute() = IntsAttr("perm", {0, 2, 1, 3});
  m.Output("xt", DataType::kFloat, {kSeq, kBatch, kInput});
  m.Output("yt", DataType::kFloat, {1, kSeq, kBatch, kHidden});
  m.Output("y2t", DataType::kFloat, {kBatch, 1, kSeq, kHidden});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({kBatch, kSeq, kInput}, 7))}});
  EXPECT_EQ(Count(c.after, "Transpose"), 3);
}

}  // namespace
}  // namespace onyx
