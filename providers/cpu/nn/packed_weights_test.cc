// Packed weights are shared by the sessions of one shared-weights group (a
// server's bucket sessions) and freed with the last of them; sessions
// without the group, or with different weights, pack their own.
#include "providers/cpu/nn/packed_weights.h"

#include <cstdio>

#include "gtest/gtest.h"
#include "onyx/session.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;

// Two convolutions and a matmul with constant weights.
std::string Model(uint32_t seed) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {-1, 8, 6, 6}).Output("y", DataType::kFloat, {-1, 6, 16});
  m.Initializer("w1", RandomFloatTensor({16, 8, 3, 3}, seed));
  m.Initializer("w2", RandomFloatTensor({6, 16, 1, 1}, seed + 1));
  m.Initializer("w3", RandomFloatTensor({36, 16}, seed + 2));
  m.Initializer("b3", RandomFloatTensor({16}, seed + 3));
  m.Initializer("shape", testing::Int64Tensor({3}, {-1, 6, 36}));
  *m.Node("Conv", {"x", "w1"}, {"c1"}).add_attribute() = IntsAttr("pads", {1, 1, 1, 1});
  m.Node("Conv", {"c1", "w2"}, {"c2"});
  m.Node("Reshape", {"c2", "shape"}, {"r"});
  m.Node("MatMul", {"r", "w3"}, {"mm"});
  m.Node("Add", {"mm", "b3"}, {"y"});
  return m.Serialize();
}

std::unique_ptr<InferenceSession> Session(const std::string& model, const std::string& group, int64_t batch) {
  SessionOptions options;
  options.shared_weights_group = group;
  options.input_shape_overrides["x"] = {batch, 8, 6, 6};
  auto session = InferenceSession::CreateFromBytes(model, options);
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return nullptr;
  auto out = (*session)->Run(RunOptions(), {{"x", Value(RandomFloatTensor({batch, 8, 6, 6}, 9))}}, {});
  EXPECT_TRUE(out.ok()) << out.status();
  return *std::move(session);
}

TEST(PackedWeightsTest, BucketSessionsShareOneCopy) {
  const size_t before = LivePackedWeights().entries;
  const std::string model = Model(1);
  auto bucket1 = Session(model, "model-a", 1);
  const PackedWeightsStats one = LivePackedWeights();
  ASSERT_GT(one.entries, before);
  auto bucket4 = Session(model, "model-a", 4);
  auto bucket8 = Session(model, "model-a", 8);
  // Same bytes at the same addresses: three buckets keep fewer than three
  // copies (one each only where a batch size makes oneDNN pick another
  // layout; none on AVX-512 for these shapes).
  const PackedWeightsStats three = LivePackedWeights();
  std::printf("packed copies: %zu for one bucket, %zu for three\n", one.entries - before, three.entries - before);
  EXPECT_LT(three.entries - before, 3 * (one.entries - before));
  // Another model's weights, and the same model outside the group, pack anew.
  auto other = Session(Model(50), "model-b", 1);
  auto alone = Session(model, "", 1);
  EXPECT_GE(LivePackedWeights().entries, three.entries + 2 * (one.entries - before));
  other.reset();
  alone.reset();
  bucket1.reset();
  bucket4.reset();
  bucket8.reset();
  EXPECT_EQ(LivePackedWeights().entries, before);
}

}  // namespace
}  // namespace onyx
