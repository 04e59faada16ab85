// RotaryEmbedding-23 through a session; expected values from ONNX Runtime
// 1.30 on the same inputs (the first pair is worked by hand below).
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::Values;

TEST(RotaryEmbeddingTest, InterleavedFourDimensionalWithPositions) {
  // x [1, 2 heads, 2 positions, 4]; position 2 of the caches (cos 0.6, -1;
  // sin 0.8, 0) rotates head 0, step 0: pair (-1, -0.75) -> (0.6 * -1 - 0.8 *
  // -0.75, 0.8 * -1 + 0.6 * -0.75) = (0, -1.25); pair (-0.5, -0.25) -> (0.5, 0.25).
  ModelBuilder m(23);
  m.Input("x", DataType::kFloat, {1, 2, 2, 4}).Output("y", DataType::kFloat, {1, 2, 2, 4});
  m.Initializer("cos", FloatTensor({3, 2}, {1, 1, 0, 0.5f, 0.6f, -1}));
  m.Initializer("sin", FloatTensor({3, 2}, {0, 0, 1, 0.5f, 0.8f, 0}));
  m.Initializer("pos", Int64Tensor({1, 2}, {2, 1}));
  m.Node("RotaryEmbedding", {"x", "cos", "sin", "pos"}, {"y"}, "rope")
      .add_attribute()
      ->CopyFrom(IntAttr("interleaved", 1));
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = i / 4.f - 1;
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 2, 2, 4}, x))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> expected = {0.0f,  -1.25f, 0.5f,  0.25f,  -0.25f, 0.0f, -0.125f, 0.625f,
                                       -0.4f, 1.55f,  -1.5f, -1.75f, -2.25f, 2.0f, -0.125f, 2.625f};
  const std::vector<float> y = Values<float>((*out)[0]);
  ASSERT_EQ(y.size(), expected.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-6) << i;
}

TEST(RotaryEmbeddingTest, PartialRotationOfThreeDimensionalInputWithoutPositions) {
  // x [1, 2, 8] as 2 heads of 4; only the first 2 values of each head turn,
  // by the per-token caches [1, 2, 1]: token 0 by 90 degrees (cos 0, sin 1).
  ModelBuilder m(23);
  m.Input("x", DataType::kFloat, {1, 2, 8}).Output("y", DataType::kFloat, {1, 2, 8});
  m.Initializer("cos", FloatTensor({1, 2, 1}, {0, 0.5f}));
  m.Initializer("sin", FloatTensor({1, 2, 1}, {1, -0.5f}));
  auto& n = m.Node("RotaryEmbedding", {"x", "cos", "sin"}, {"y"}, "rope");
  n.add_attribute()->CopyFrom(IntAttr("num_heads", 2));
  n.add_attribute()->CopyFrom(IntAttr("rotary_embedding_dim", 2));
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = i / 8.f;
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 2, 8}, x))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]),
            (std::vector<float>{-0.125f, 0.0f, 0.25f, 0.375f, -0.625f, 0.5f, 0.75f, 0.875f, 1.0625f, 0.0625f, 1.25f,
                                1.375f, 1.5625f, 0.0625f, 1.75f, 1.875f}));
}

TEST(RotaryEmbeddingTest, PositionOutsideTheCacheIsRefused) {
  ModelBuilder m(23);
  m.Input("x", DataType::kFloat, {1, 1, 1, 2}).Output("y", DataType::kFloat, {1, 1, 1, 2});
  m.Initializer("cos", FloatTensor({2, 1}, {1, 1}));
  m.Initializer("sin", FloatTensor({2, 1}, {0, 0}));
  m.Initializer("pos", Int64Tensor({1, 1}, {2}));
  m.Node("RotaryEmbedding", {"x", "cos", "sin", "pos"}, {"y"}, "rope");
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 1, 1, 2}, {1, 2}))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("out of range [0, 2)"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace onyx
