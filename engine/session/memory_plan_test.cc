// Steady-state memory behaviour of a session: after the first run of a shape
// (which learns the memory pattern), runs make no device allocations and at
// most one arena reservation for all intermediates, and compute the same
// results as the learning run.
#include <algorithm>
#include <cmath>
#include <vector>

#include "framework/device_arena.h"
#include "gtest/gtest.h"
#include "onyx/session.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::Int64Tensor;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;

// Conv -> Relu -> Reshape (a view) -> MatMul -> Relu -> Softmax, two outputs.
ModelBuilder Network() {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 3, 8, 8});
  m.Output("probs", DataType::kFloat, {2, 10}).Output("features", DataType::kFloat, {2, 4, 8, 8});
  m.Initializer("w", RandomFloatTensor({4, 3, 3, 3}, 1));
  m.Initializer("shape", Int64Tensor({2}, {2, 256}));
  m.Initializer("fc", RandomFloatTensor({256, 10}, 2));
  *m.Node("Conv", {"x", "w"}, {"c"}).add_attribute() = IntsAttr("pads", {1, 1, 1, 1});
  m.Node("Relu", {"c"}, {"features"});
  m.Node("Reshape", {"features", "shape"}, {"flat"});
  m.Node("MatMul", {"flat", "fc"}, {"logits"});
  m.Node("Relu", {"logits"}, {"r"});
  m.Node("Softmax", {"r"}, {"probs"});
  return m;
}

TEST(MemoryPlanTest, SteadyStateRunsReserveOneBlockAndNeverExtend) {
  SessionOptions options;
  options.optimization_level = OptimizationLevel::kDisabled;  // keep every intermediate
  auto session = InferenceSession::CreateFromBytes(Network().Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  Feeds feeds = {{"x", Value(RandomFloatTensor({2, 3, 8, 8}, 3))}};
  auto first = (*session)->Run(RunOptions(), feeds, {});  // learns the pattern
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE((*session)->Run(RunOptions(), feeds, {}).ok());  // warms the arena's bins

  BFCArena::Stats before = CpuArena().GetStats();
  constexpr int kRuns = 50;
  for (int i = 0; i < kRuns; ++i) {
    auto out = (*session)->Run(RunOptions(), feeds, {});
    ASSERT_TRUE(out.ok()) << out.status();
    for (size_t o = 0; o < out->size(); ++o) {
      const Tensor& a = (*first)[o].tensor();
      const Tensor& b = (*out)[o].tensor();
      ASSERT_EQ(a.dims(), b.dims());
      for (int64_t k = 0; k < a.num_elements(); ++k) ASSERT_EQ(a.data<float>()[k], b.data<float>()[k]);
    }
  }
  BFCArena::Stats after = CpuArena().GetStats();
  EXPECT_EQ(after.extends, before.extends) << "a warm run asked the device allocator for memory";
  // Per run: one block for the intermediates plus one chunk per graph output.
  EXPECT_LE(after.allocations - before.allocations, kRuns * (1 + 2));

  MemoryPlanInfo info = (*session)->memory_plan_info();
  EXPECT_EQ(info.patterns, 1);
  EXPECT_GT(info.planned_bytes, 0);
  EXPECT_LT(info.planned_bytes, info.without_reuse_bytes);
}

TEST(MemoryPlanTest, PatternCacheIsBoundedAcrossShapes) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {-1, 4}).Output("y", DataType::kFloat, {-1, 4});
  m.Node("Relu", {"x"}, {"a"});
  m.Node("Relu", {"a"}, {"b"});
  m.Node("Relu", {"b"}, {"y"});
  SessionOptions options;
  options.optimization_level = OptimizationLevel::kDisabled;
  options.mem_pattern_cache_size = 4;
  auto session = InferenceSession::CreateFromBytes(m.Serialize(), options);
  ASSERT_TRUE(session.ok());
  for (int batch = 1; batch <= 10; ++batch) {
    Feeds feeds = {{"x", Value(RandomFloatTensor({batch, 4}, batch))}};
    ASSERT_TRUE((*session)->Run(RunOptions(), feeds, {}).ok());
    ASSERT_TRUE((*session)->Run(RunOptions(), feeds, {}).ok());
  }
  EXPECT_EQ((*session)->memory_plan_info().patterns, 4);
}

TEST(MemoryPlanTest, ShrinkAtRunEndReturnsFreeRegions) {
  auto session = InferenceSession::CreateFromBytes(Network().Serialize(), {});
  ASSERT_TRUE(session.ok());
  Feeds feeds = {{"x", Value(RandomFloatTensor({2, 3, 8, 8}, 3))}};
  auto plain = (*session)->Run(RunOptions(), feeds, {});
  ASSERT_TRUE(plain.ok());
  BFCArena::Stats before = CpuArena().GetStats();
  RunOptions shrink;
  shrink.shrink_arena_at_end = true;
  auto out = (*session)->Run(shrink, feeds, {});
  ASSERT_TRUE(out.ok());
  BFCArena::Stats after = CpuArena().GetStats();
  EXPECT_LE(after.reserved_bytes, before.reserved_bytes + after.in_use_bytes - before.in_use_bytes);
  EXPECT_LE(after.free_bytes, before.free_bytes);
  // Shrinking loses nothing: the next run still computes the same values.
  auto again = (*session)->Run(RunOptions(), feeds, {});
  ASSERT_TRUE(again.ok());
  for (int64_t k = 0; k < 20; ++k) {
    EXPECT_EQ((*again)[0].tensor().data<float>()[k], (*plain)[0].tensor().data<float>()[k]);
  }
}

TEST(MemoryPlanTest, ElementwiseChainRunsInPlace) {
  // a = x @ w; b = Relu(a); c = Sigmoid(b); y = c @ w2. a dies at Relu and b at
  // Sigmoid, both kernels allow in-place: a, b and c share one buffer.
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {4, 64}).Output("y", DataType::kFloat, {4, 8});
  const Tensor x = RandomFloatTensor({4, 64}, 3), w = RandomFloatTensor({64, 256}, 1),
               w2 = RandomFloatTensor({256, 8}, 2);
  m.Initializer("w", w);
  m.Initializer("w2", w2);
  m.Node("MatMul", {"x", "w"}, {"a"});
  m.Node("Relu", {"a"}, {"b"});
  m.Node("Sigmoid", {"b"}, {"c"});
  m.Node("MatMul", {"c", "w2"}, {"y"});
  SessionOptions options;
  options.optimization_level = OptimizationLevel::kDisabled;
  auto session = InferenceSession::CreateFromBytes(m.Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  // The same graph without memory patterns: no buffer sharing, no in-place.
  options.enable_mem_pattern = false;
  auto unshared = InferenceSession::CreateFromBytes(m.Serialize(), options);
  ASSERT_TRUE(unshared.ok()) << unshared.status();
  Feeds feeds = {{"x", Value(x)}};
  auto want = (*unshared)->Run(RunOptions(), feeds, {});
  ASSERT_TRUE(want.ok()) << want.status();
  // And the chain evaluated directly, in double.
  std::vector<double> direct(4 * 8, 0.0);
  for (int i = 0; i < 4; ++i) {
    for (int k = 0; k < 256; ++k) {
      double a = 0;
      for (int j = 0; j < 64; ++j) a += double{x.data<float>()[i * 64 + j]} * w.data<float>()[j * 256 + k];
      const double c = 1 / (1 + std::exp(-std::max(a, 0.0)));
      for (int o = 0; o < 8; ++o) direct[i * 8 + o] += c * w2.data<float>()[k * 8 + o];
    }
  }
  ASSERT_TRUE((*session)->Run(RunOptions(), feeds, {}).ok());  // learns the pattern
  const int64_t one_buffer = 4 * 256 * 4;
  MemoryPlanInfo info = (*session)->memory_plan_info();
  EXPECT_EQ(info.planned_bytes, one_buffer);
  EXPECT_EQ(info.without_reuse_bytes, 3 * one_buffer);
  for (int run = 0; run < 5; ++run) {  // in-place runs
    auto out = (*session)->Run(RunOptions(), feeds, {});
    ASSERT_TRUE(out.ok());
    for (int k = 0; k < 32; ++k) {
      ASSERT_EQ((*out)[0].tensor().data<float>()[k], (*want)[0].tensor().data<float>()[k]) << run << ": " << k;
      ASSERT_NEAR((*out)[0].tensor().data<float>()[k], direct[k], 1e-4 * (1 + std::abs(direct[k]))) << k;
    }
  }
}

TEST(MemoryPlanTest, CastBetweenTypesOfOneSizeRunsInPlace) {
  // a = -x (int32); b = Cast(a, float); c = Relu(b); y = c @ w. a dies at the
  // Cast and b at the Relu: a, b and c share one buffer.
  ModelBuilder m(13);
  m.Input("x", DataType::kInt32, {4, 256}).Output("y", DataType::kFloat, {4, 8});
  Tensor x = Tensor::Allocate(DataType::kInt32, {4, 256});
  for (int i = 0; i < 4 * 256; ++i) x.mutable_data<int32_t>()[i] = (i * 7919) % 2001 - 1000;
  const Tensor w = RandomFloatTensor({256, 8}, 4);
  m.Initializer("w", w);
  m.Node("Neg", {"x"}, {"a"});
  *m.Node("Cast", {"a"}, {"b"}).add_attribute() = testing::IntAttr("to", 1);
  m.Node("Relu", {"b"}, {"c"});
  m.Node("MatMul", {"c", "w"}, {"y"});
  SessionOptions options;
  options.optimization_level = OptimizationLevel::kDisabled;
  auto session = InferenceSession::CreateFromBytes(m.Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<double> direct(4 * 8, 0.0);
  for (int i = 0; i < 4; ++i) {
    for (int k = 0; k < 256; ++k) {
      const double c = std::max(-double{x.data<int32_t>()[i * 256 + k]}, 0.0);
      for (int o = 0; o < 8; ++o) direct[i * 8 + o] += c * w.data<float>()[k * 8 + o];
    }
  }
  Feeds feeds = {{"x", Value(x)}};
  ASSERT_TRUE((*session)->Run(RunOptions(), feeds, {}).ok());  // learns the pattern
  const int64_t one_buffer = 4 * 256 * 4;
  MemoryPlanInfo info = (*session)->memory_plan_info();
  EXPECT_EQ(info.planned_bytes, one_buffer);
  EXPECT_EQ(info.without_reuse_bytes, 3 * one_buffer);
  for (int run = 0; run < 3; ++run) {
    auto out = (*session)->Run(RunOptions(), feeds, {});
    ASSERT_TRUE(out.ok()) << out.status();
    for (int k = 0; k < 32; ++k) {
      ASSERT_NEAR((*out)[0].tensor().data<float>()[k], direct[k], 1e-4 * (1 + std::abs(direct[k]))) << run << ": " << k;
    }
  }
}

TEST(MemoryPlanTest, ArithmeticRunsInPlaceOverItsFullShapedInput) {
  // As a dynamically quantized model dequantizes: a = x @ w; b = a * s (s a
  // broadcast scalar input); c = k + b (k broadcast, b the second operand);
  // y = c @ w2. a dies at the Mul and b at the Add: a, b and c share one
  // buffer.
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {4, 64}).Input("s", DataType::kFloat, {1}).Input("k", DataType::kFloat, {256});
  m.Output("y", DataType::kFloat, {4, 8});
  const Tensor x = RandomFloatTensor({4, 64}, 5), s = RandomFloatTensor({1}, 6), k = RandomFloatTensor({256}, 7);
  const Tensor w = RandomFloatTensor({64, 256}, 8), w2 = RandomFloatTensor({256, 8}, 9);
  m.Initializer("w", w);
  m.Initializer("w2", w2);
  m.Node("MatMul", {"x", "w"}, {"a"});
  m.Node("Mul", {"a", "s"}, {"b"});
  m.Node("Add", {"k", "b"}, {"c"});
  m.Node("MatMul", {"c", "w2"}, {"y"});
  SessionOptions options;
  options.optimization_level = OptimizationLevel::kDisabled;
  auto session = InferenceSession::CreateFromBytes(m.Serialize(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<double> direct(4 * 8, 0.0);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 256; ++j) {
      double a = 0;
      for (int t = 0; t < 64; ++t) a += double{x.data<float>()[i * 64 + t]} * w.data<float>()[t * 256 + j];
      const double c = k.data<float>()[j] + a * s.data<float>()[0];
      for (int o = 0; o < 8; ++o) direct[i * 8 + o] += c * w2.data<float>()[j * 8 + o];
    }
  }
  Feeds feeds = {{"x", Value(x)}, {"s", Value(s)}, {"k", Value(k)}};
  ASSERT_TRUE((*session)->Run(RunOptions(), feeds, {}).ok());  // learns the pattern
  const int64_t one_buffer = 4 * 256 * 4;
  MemoryPlanInfo info = (*session)->memory_plan_info();
  EXPECT_EQ(info.planned_bytes, one_buffer);
  EXPECT_EQ(info.without_reuse_bytes, 3 * one_buffer);
  for (int run = 0; run < 3; ++run) {
    auto out = (*session)->Run(RunOptions(), feeds, {});
    ASSERT_TRUE(out.ok()) << out.status();
    for (int o = 0; o < 32; ++o) {
      ASSERT_NEAR((*out)[0].tensor().data<float>()[o], direct[o], 1e-4 * (1 + std::abs(direct[o]))) << run << ": " << o;
    }
  }
}

TEST(MemoryPlanTest, DisabledPatternsStillRun) {
  SessionOptions options;
  options.enable_mem_pattern = false;
  auto session = InferenceSession::CreateFromBytes(Network().Serialize(), options);
  ASSERT_TRUE(session.ok());
  Feeds feeds = {{"x", Value(RandomFloatTensor({2, 3, 8, 8}, 3))}};
  ASSERT_TRUE((*session)->Run(RunOptions(), feeds, {}).ok());
  EXPECT_EQ((*session)->memory_plan_info().patterns, 0);
}

}  // namespace
}  // namespace onyx
