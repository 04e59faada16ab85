// Packed weights are shared by the sessions of one shared-weights group (a
// server's bucket sessions) and freed with the last of them; sessions
// without the group, or with different weights, pack their own. A session
// without a group releases the plain bytes of weights that only packing
// kernels read, and still computes what a product in double says.
#include "providers/cpu/nn/packed_weights.h"

#include <cmath>
#include <cstdio>
#include <vector>

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

// x [-1, 16] -> MatMul w1 [16, 24] + b1 -> Relu -> Gemm (w2 [8, 24], transB,
// C = b2) -> Add shared -> y [-1, 8]; `shared` [24, 8] is also a MatMul's B
// (a packing reader) next to the Add (a reader of the bytes): only w1 and w2
// may go.
std::string ReleaseModel() {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {-1, 16}).Output("y", DataType::kFloat, {-1, 8});
  m.Output("z", DataType::kFloat, {-1, 8});
  m.Initializer("w1", RandomFloatTensor({16, 24}, 31));
  m.Initializer("b1", RandomFloatTensor({24}, 32));
  m.Initializer("w2", RandomFloatTensor({8, 24}, 33));
  m.Initializer("b2", RandomFloatTensor({8}, 34));
  m.Initializer("shared", RandomFloatTensor({24, 8}, 35));
  m.Node("MatMul", {"x", "w1"}, {"h0"});
  m.Node("Add", {"h0", "b1"}, {"h1"});
  m.Node("Relu", {"h1"}, {"h"});
  *m.Node("Gemm", {"h", "w2", "b2"}, {"g"}).add_attribute() = testing::IntAttr("transB", 1);
  m.Node("Add", {"g", "b2"}, {"y"});
  m.Node("MatMul", {"h", "shared"}, {"s"});
  m.Node("Add", {"s", "shared"}, {"z"});  // shared [24, 8] broadcast against s: needs every rows == 24
  return m.Serialize();
}

// The model above in double, for `rows` rows of x.
std::vector<double> ReleaseModelReference(const Tensor& x, int64_t rows, std::vector<double>* z) {
  const Tensor w1 = RandomFloatTensor({16, 24}, 31), b1 = RandomFloatTensor({24}, 32);
  const Tensor w2 = RandomFloatTensor({8, 24}, 33), b2 = RandomFloatTensor({8}, 34);
  const Tensor shared = RandomFloatTensor({24, 8}, 35);
  std::vector<double> h(rows * 24), y(rows * 8);
  z->assign(rows * 8, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < 24; ++j) {
      double sum = b1.data<float>()[j];
      for (int64_t i = 0; i < 16; ++i) sum += double(x.data<float>()[r * 16 + i]) * w1.data<float>()[i * 24 + j];
      h[r * 24 + j] = std::max(sum, 0.0);
    }
    for (int64_t j = 0; j < 8; ++j) {
      double g = b2.data<float>()[j], s = 0;
      for (int64_t i = 0; i < 24; ++i) {
        g += h[r * 24 + i] * w2.data<float>()[j * 24 + i];
        s += h[r * 24 + i] * shared.data<float>()[i * 8 + j];
      }
      y[r * 8 + j] = g + b2.data<float>()[j];
      (*z)[r * 8 + j] = s + shared.data<float>()[r * 8 + j];
    }
  }
  return y;
}

TEST(PackedWeightsTest, SessionReleasesTheWeightsOnlyPackingKernelsRead) {
  const std::string model = ReleaseModel();
  for (const std::string group : {"", "release-group"}) {
    SCOPED_TRACE(group.empty() ? "no shared-weights group" : "in a shared-weights group");
    SessionOptions options;
    options.shared_weights_group = group;
    auto session = InferenceSession::CreateFromBytes(model, options);
    ASSERT_TRUE(session.ok()) << session.status();
    const MemoryPlanInfo info = (*session)->memory_plan_info();
    if (group.empty()) {
      EXPECT_EQ(info.released_constants, 2);  // w1 and w2; not `shared`, not the biases
      EXPECT_EQ(info.released_constant_bytes, (16 * 24 + 8 * 24) * 4);
    } else {
      EXPECT_EQ(info.released_constants, 0);  // the group keeps them for its next session
    }
    // 24 rows (the broadcast of `shared`), then again: the primitive packed
    // for an unknown row count serves other counts from the packed copy.
    for (int run = 0; run < 2; ++run) {
      const int64_t rows = 24;
      const Tensor x = RandomFloatTensor({rows, 16}, 40 + run);
      auto out = (*session)->Run(RunOptions(), {{"x", Value(x)}}, {});
      ASSERT_TRUE(out.ok()) << out.status();
      std::vector<double> z;
      const std::vector<double> y = ReleaseModelReference(x, rows, &z);
      const Tensor& got_y = (*out)[0].tensor();
      const Tensor& got_z = (*out)[1].tensor();
      ASSERT_EQ(got_y.num_elements(), rows * 8);
      ASSERT_EQ(got_z.num_elements(), rows * 8);
      for (int64_t i = 0; i < rows * 8; ++i) {
        EXPECT_NEAR(got_y.data<float>()[i], y[i], 1e-4 * (1 + std::fabs(y[i]))) << i;
        EXPECT_NEAR(got_z.data<float>()[i], z[i], 1e-4 * (1 + std::fabs(z[i]))) << i;
      }
    }
  }
}

TEST(PackedWeightsTest, ReleasedWeightsServeEveryRowCount) {
  // A chain of constant-B MatMuls, batch dynamic: packed at creation for a
  // guessed row count, run at 1, 7 and 130 rows.
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {-1, 12}).Output("y", DataType::kFloat, {-1, 5});
  m.Initializer("w1", RandomFloatTensor({12, 20}, 61));
  m.Initializer("w2", RandomFloatTensor({20, 5}, 62));
  m.Node("MatMul", {"x", "w1"}, {"h"});
  m.Node("MatMul", {"h", "w2"}, {"y"});
  auto session = InferenceSession::CreateFromBytes(m.Serialize(), SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ((*session)->memory_plan_info().released_constants, 2);
  const Tensor w1 = RandomFloatTensor({12, 20}, 61), w2 = RandomFloatTensor({20, 5}, 62);
  for (int64_t rows : {1, 7, 130}) {
    const Tensor x = RandomFloatTensor({rows, 12}, 70 + rows);
    auto out = (*session)->Run(RunOptions(), {{"x", Value(x)}}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& y = (*out)[0].tensor();
    ASSERT_EQ(y.num_elements(), rows * 5);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < 5; ++j) {
        double sum = 0;
        for (int64_t i = 0; i < 20; ++i) {
          double h = 0;
          for (int64_t t = 0; t < 12; ++t) h += double(x.data<float>()[r * 12 + t]) * w1.data<float>()[t * 20 + i];
          sum += h * w2.data<float>()[i * 5 + j];
        }
        EXPECT_NEAR(y.data<float>()[r * 5 + j], sum, 1e-4 * (1 + std::fabs(sum))) << "rows " << rows;
      }
    }
  }
}

}  // namespace
}  // namespace onyx
