// Unit tests of the contrib kernels' pieces: the attention core against a
// direct double-precision loop, the mask forms against hand-written masks,
// and the forms the kernels refuse (the values themselves are checked against
// ONNX Runtime's recorded outputs by tests/conformance/contrib_ops).
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/contrib/attention_core.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatAttr;
using testing::FloatTensor;
using testing::IntAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;
using testing::StringAttr;

constexpr float kLowest = std::numeric_limits<float>::lowest();

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// Q, K, V packed as rows of [Q | K | V] per (b, s), heads side by side, the
// layout Attention's projection leaves; the output written as [B, S, N * Hv].
TEST(AttentionCoreTest, MatchesDirectComputationOnStridedHeads) {
  const int64_t b = 2, n = 3, s = 4, t = 4, h = 5, hv = 2;
  const int64_t cols = 2 * n * h + n * hv;
  const std::vector<float> qkv = Random(b * s * cols, 1);
  const std::vector<float> mask = [&] {
    std::vector<float> m(b * s * t, 0.f);
    m[1 * s * t + 2 * t + 3] = -10000.f;  // batch 1, query 2 may not see key 3
    return m;
  }();
  const std::vector<float> bias = Random(n * s * t, 2);  // (1, N, S, T)
  AttentionProblem p;
  p.batch = b;
  p.heads = n;
  p.q_len = s;
  p.kv_len = t;
  p.qk_head = h;
  p.v_head = hv;
  p.scale = 0.7f;
  p.q = {qkv.data(), {s * cols, h, cols}};
  p.k = {qkv.data() + n * h, {s * cols, h, cols}};
  p.v = {qkv.data() + 2 * n * h, {s * cols, hv, cols}};
  p.mask = mask.data();
  p.attention_bias = bias.data();
  p.bias_per_head = true;
  std::vector<float> out(b * s * n * hv, -1.f), scores(b * n * s * t);
  p.out = out.data();
  p.out_strides = {s * n * hv, hv, n * hv};
  p.scores_out = scores.data();
  AttentionCore core;
  ASSERT_TRUE(core.Run(p).ok());
  ASSERT_TRUE(core.Run(p).ok());  // the cached primitives give the same result

  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t ni = 0; ni < n; ++ni) {
      for (int64_t si = 0; si < s; ++si) {
        std::vector<double> row(t);
        double max = -1e300;
        for (int64_t ti = 0; ti < t; ++ti) {
          double dot = 0;
          for (int64_t k = 0; k < h; ++k) {
            dot += qkv[(bi * s + si) * cols + ni * h + k] * qkv[(bi * s + ti) * cols + n * h + ni * h + k];
          }
          row[ti] = 0.7 * dot + bias[(ni * s + si) * t + ti] + mask[(bi * s + si) * t + ti];
          EXPECT_NEAR(scores[((bi * n + ni) * s + si) * t + ti], row[ti], 1e-6 * (100 + std::fabs(row[ti])));
          max = std::max(max, row[ti]);
        }
        double sum = 0;
        for (double& v : row) sum += (v = std::exp(v - max));
        for (int64_t c = 0; c < hv; ++c) {
          double want = 0;
          for (int64_t ti = 0; ti < t; ++ti) {
            want += row[ti] / sum * qkv[(bi * s + ti) * cols + 2 * n * h + ni * hv + c];
          }
          EXPECT_NEAR(out[(bi * s + si) * n * hv + ni * hv + c], want, 1e-5)
              << "b " << bi << " n " << ni << " s " << si << " c " << c;
        }
      }
    }
  }
}

TEST(AttentionCoreTest, NoKeysGivesZeros) {
  AttentionProblem p;
  p.batch = p.heads = p.q_len = p.qk_head = p.v_head = 1;
  p.kv_len = 0;
  float out = 5.f;
  p.out = &out;
  p.out_strides = {1, 1, 1};
  ASSERT_TRUE(AttentionCore().Run(p).ok());
  EXPECT_EQ(out, 0.f);
}

std::vector<float> Mask(const std::vector<int32_t>& index, const std::vector<int64_t>& dims, bool causal, int64_t b,
                        int64_t s, int64_t past, int64_t t, bool allow_4d = false) {
  auto m = BuildAttentionMask(index.empty() ? nullptr : index.data(), dims, causal, b, s, past, t, -9.f, allow_4d);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : std::vector<float>();
}

TEST(BuildAttentionMaskTest, LengthsAndStartPositions) {
  // B = 2, S = 1, T = 3: end positions 2 and 3.
  EXPECT_EQ(Mask({2, 3}, {2}, false, 2, 1, 0, 3), std::vector<float>({0, 0, -9, 0, 0, 0}));
  // (2B): ends 3, 2 then starts 1, 0.
  EXPECT_EQ(Mask({3, 2, 1, 0}, {4}, false, 2, 1, 0, 3), std::vector<float>({-9, 0, 0, 0, 0, -9}));
  // (3B + 2): only the first B values, as end positions.
  EXPECT_EQ(Mask({1, 3, 7, 7, 7, 7, 7, 7}, {8}, false, 2, 1, 0, 3), std::vector<float>({0, -9, -9, 0, 0, 0}));
}

TEST(BuildAttentionMaskTest, RawMasksOfRank2To4) {
  EXPECT_EQ(Mask({1, 0, 1}, {1, 3}, false, 1, 2, 0, 3), std::vector<float>({0, -9, 0, 0, -9, 0}));
  EXPECT_EQ(Mask({1, 0, 1, 0, 1, 1}, {1, 2, 3}, false, 1, 2, 0, 3), std::vector<float>({0, -9, 0, -9, 0, 0}));
  // 4-D (B, 1, M, M), M = 4 > T = 3, past 1: query s reads row 1 + s.
  const std::vector<int32_t> m4 = {1, 1, 1, 1,  //
                                   1, 0, 1, 1,  //
                                   0, 1, 1, 0,  //
                                   1, 1, 1, 1};
  EXPECT_EQ(Mask(m4, {1, 1, 4, 4}, false, 1, 2, 1, 3, true), std::vector<float>({0, -9, 0, -9, 0, 0}));
  EXPECT_FALSE(BuildAttentionMask(m4.data(), {1, 1, 4, 4}, false, 1, 2, 1, 3, -9.f, false).ok());
}

TEST(BuildAttentionMaskTest, CausalWithPastUsesLowest) {
  // S = 2 queries after 1 past key, T = 3: query 0 sees keys 0..1.
  EXPECT_EQ(Mask({}, {}, true, 1, 2, 1, 3), std::vector<float>({0, 0, kLowest, 0, 0, 0}));
  // A single query sees everything.
  EXPECT_TRUE(Mask({}, {}, true, 1, 1, 2, 3).empty());
  auto bad = BuildAttentionMask(std::vector<int32_t>(5).data(), {5}, false, 2, 1, 0, 3, -9.f, false);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("(B) lengths"), std::string::npos);
}

// A one-node com.microsoft model; the session's creation or run status.
absl::Status RunOne(const std::string& op, const std::vector<std::pair<std::string, Tensor>>& inputs,
                    const std::vector<onnx::AttributeProto>& attrs, int64_t out_rank = 3) {
  ModelBuilder m(17);
  m.Opset("com.microsoft", 1);
  Feeds feeds;
  std::vector<std::string> names;
  for (const auto& [name, t] : inputs) {
    names.push_back(name);
    if (name.empty()) continue;
    m.Input(name, t.type(), std::vector<int64_t>(t.dims().begin(), t.dims().end()));
    feeds.emplace_back(name, Value(t));
  }
  m.Output("y", DataType::kFloat, std::vector<int64_t>(out_rank, -1));
  onnx::NodeProto& n = m.Node(op, names, {"y"});
  n.set_domain("com.microsoft");
  for (const auto& a : attrs) *n.add_attribute() = a;
  auto out = testing::RunModel(m, feeds, {"y"});
  return out.status();
}

void ExpectError(const absl::Status& status, const std::string& text) {
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(text), std::string::npos) << status;
}

TEST(ContribKernelsTest, RefusesWhatOnnxRuntimeRefuses) {
  ExpectError(RunOne("MultiHeadAttention", {{"q", RandomFloatTensor({1, 2, 2, 3, 4}, 1)}}, {IntAttr("num_heads", 2)}),
              "packed QKV");
  ExpectError(RunOne("Attention",
                     {{"x", RandomFloatTensor({1, 2, 8}, 1)},
                      {"w", RandomFloatTensor({8, 24}, 2)},
                      {"b", RandomFloatTensor({24}, 3)}},
                     {IntAttr("num_heads", 2), IntAttr("do_rotary", 1)}),
              "do_rotary");
  ExpectError(RunOne("FusedGemm", {{"a", RandomFloatTensor({2, 3}, 1)}, {"b", RandomFloatTensor({3, 2}, 2)}},
                     {StringAttr("activation", "LeakyRelu")}, 2),
              "needs attribute activation_alpha");
  ExpectError(RunOne("FusedGemm", {{"a", RandomFloatTensor({2, 3}, 1)}, {"b", RandomFloatTensor({3, 2}, 2)}},
                     {StringAttr("activation", "Gelu")}, 2),
              "unsupported activation 'Gelu'");
}

TEST(ContribKernelsTest, ShapeErrorsNameTheInput) {
  ExpectError(RunOne("SkipLayerNormalization",
                     {{"x", RandomFloatTensor({2, 3, 4}, 1)},
                      {"s", RandomFloatTensor({2, 4}, 2)},
                      {"g", RandomFloatTensor({4}, 3)}},
                     {}),
              "skip must have input's shape");
  ExpectError(RunOne("BiasGelu", {{"a", RandomFloatTensor({2, 3}, 1)}, {"b", RandomFloatTensor({2}, 2)}}, {}, 2),
              "B must be 1-D with 3 elements");
  ExpectError(RunOne("Attention",
                     {{"x", RandomFloatTensor({2, 3, 4}, 1)},
                      {"w", RandomFloatTensor({4, 12}, 2)},
                      {"b", RandomFloatTensor({12}, 3)},
                      {"m", Tensor::Allocate(DataType::kInt32, {2, 2})}},
                     {IntAttr("num_heads", 2)}),
              "the mask (2, 2) must be");
}

// The 8-bit weight forms the quantized matmuls take: int8 with zero point 0
// and uint8 with 128 (both run in int8 by oneDNN), int8 with 3 (the float
// path).
struct WeightForm {
  DataType type;
  int zero_point;
};
constexpr WeightForm kWeightForms[] = {{DataType::kInt8, 0}, {DataType::kUint8, 128}, {DataType::kInt8, 3}};

Tensor ByteScalar(DataType type, int value) {
  Tensor t = Tensor::Allocate(type, {});
  if (type == DataType::kInt8) t.mutable_data<int8_t>()[0] = static_cast<int8_t>(value);
  else t.mutable_data<uint8_t>()[0] = static_cast<uint8_t>(value);
  return t;
}

// Random weights [k, n] of the form's type within 127 of its zero point; their
// integer values in *values.
Tensor RandomWeights(const WeightForm& f, int64_t k, int64_t n, std::mt19937& gen, std::vector<int>* values) {
  std::uniform_int_distribution<int> byte(-127, 127);
  values->resize(k * n);
  for (int& v : *values) v = byte(gen) + (f.type == DataType::kUint8 ? 128 : 0);
  Tensor b = Tensor::Allocate(f.type, {k, n});
  for (int64_t i = 0; i < k * n; ++i) {
    if (f.type == DataType::kInt8) b.mutable_data<int8_t>()[i] = static_cast<int8_t>((*values)[i]);
    else b.mutable_data<uint8_t>()[i] = static_cast<uint8_t>((*values)[i]);
  }
  return b;
}

// DynamicQuantizeMatMul with constant B runs in int8 (oneDNN); the values
// follow ONNX Runtime's formula written out here: A quantized to uint8 over
// its range including 0 (zero point rounded half to even), the integer
// product, times a_scale * b_scale, plus the bias. int8 B with zero point 0
// and uint8 B with 128 (both taken by the int8 product), and int8 B with
// zero point 3 (the float path) must all agree with it.
TEST(ContribKernelsTest, DynamicQuantizeMatMulWithConstantWeightsMatchesTheFormula) {
  const int64_t m = 5, k = 37, n = 19;
  const std::vector<float> a = Random(m * k, 61), bias = Random(n, 62);
  std::mt19937 gen(63);
  for (const WeightForm& f : kWeightForms) {
    std::vector<int> b_values;
    Tensor b = RandomWeights(f, k, n, gen, &b_values), b_zp = ByteScalar(f.type, f.zero_point);
    const float b_scale = 0.013f;
    ModelBuilder model(17);
    model.Opset("com.microsoft", 1);
    model.Input("a", DataType::kFloat, {m, k}).Output("y", DataType::kFloat, {m, n});
    model.Initializer("b", b).Initializer("b_scale", FloatTensor({}, {b_scale})).Initializer("b_zp", b_zp);
    model.Initializer("bias", FloatTensor({n}, bias));
    model.Node("DynamicQuantizeMatMul", {"a", "b", "b_scale", "b_zp", "bias"}, {"y"}).set_domain("com.microsoft");
    auto out = testing::RunModel(model, {{"a", Value(FloatTensor({m, k}, a))}}, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<float> y = testing::Values<float>((*out)[0]);
    float lo = 0, hi = 0;
    for (float v : a) lo = std::min(lo, v), hi = std::max(hi, v);
    const float a_scale = (hi - lo) / 255.f;
    const float a_zp = std::nearbyint(std::clamp(-lo / a_scale, 0.f, 255.f));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          const float q = std::clamp(std::nearbyint(a[i * k + p] / a_scale) + a_zp, 0.f, 255.f);
          sum += static_cast<int64_t>(q - a_zp) * (b_values[p * n + j] - f.zero_point);
        }
        const double want = static_cast<double>(sum) * a_scale * b_scale + bias[j];
        ASSERT_NEAR(y[i * n + j], want, 1e-5 * (1 + std::fabs(want)))
            << DataTypeName(f.type) << " zero point " << f.zero_point << " at " << i << ", " << j;
      }
    }
  }
}

// MatMulIntegerToFloat, and com.onyx FusedMatMulIntegerToFloat with each
// activation, against the formula written out here: act((A - a_zp) x (B -
// b_zp) * a_scale * b_scale[j] + bias[j]). A is uint8 [2, 3, 37] (a batched
// left operand, one product over its 6 rows) and b_scale per column. int8 B
// with zero point 0 and uint8 B with 128 run in int8 with the epilogue inside
// the product; int8 B with zero point 3 takes the float path.
TEST(ContribKernelsTest, MatMulIntegerToFloatMatchesTheFormula) {
  const int64_t rows = 6, k = 37, n = 19;
  std::mt19937 gen(71);
  std::uniform_int_distribution<int> ubyte(0, 255);
  std::vector<int> a_values(rows * k);
  for (int& v : a_values) v = ubyte(gen);
  Tensor a = Tensor::Allocate(DataType::kUint8, {2, 3, k});
  for (int64_t i = 0; i < rows * k; ++i) a.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(a_values[i]);
  const int a_zp = 131;
  const float a_scale = 0.021f;
  const std::vector<float> b_scale = [&] {
    std::vector<float> v = Random(n, 72);
    for (float& x : v) x = 0.01f + 0.005f * x;
    return v;
  }();
  const std::vector<float> bias = Random(n, 73);
  for (const WeightForm& f : kWeightForms) {
    std::vector<int> b_values;
    Tensor b = RandomWeights(f, k, n, gen, &b_values), b_zp = ByteScalar(f.type, f.zero_point);
    const Tensor a_zp_t = ByteScalar(DataType::kUint8, a_zp);
    for (const char* activation : {"", "Relu", "Gelu"}) {
      const bool fused = activation[0] != '\0';
      ModelBuilder model(17);
      model.Opset("com.microsoft", 1);
      if (fused) model.Opset("com.onyx", 1);
      model.Input("a", DataType::kUint8, {2, 3, k}).Output("y", DataType::kFloat, {2, 3, n});
      model.Initializer("b", b).Initializer("a_scale", FloatTensor({}, {a_scale}));
      model.Initializer("b_scale", FloatTensor({n}, b_scale)).Initializer("a_zp", a_zp_t).Initializer("b_zp", b_zp);
      model.Initializer("bias", FloatTensor({n}, bias));
      auto& node = model.Node(fused ? "FusedMatMulIntegerToFloat" : "MatMulIntegerToFloat",
                              {"a", "b", "a_scale", "b_scale", "a_zp", "b_zp", "bias"}, {"y"});
      node.set_domain(fused ? "com.onyx" : "com.microsoft");
      if (fused) node.add_attribute()->CopyFrom(StringAttr("activation", activation));
      auto out = testing::RunModel(model, {{"a", Value(a)}}, {"y"});
      ASSERT_TRUE(out.ok()) << out.status();
      const std::vector<float> y = testing::Values<float>((*out)[0]);
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          int64_t sum = 0;
          for (int64_t p = 0; p < k; ++p) {
            sum += static_cast<int64_t>(a_values[i * k + p] - a_zp) * (b_values[p * n + j] - f.zero_point);
          }
          double want = static_cast<double>(sum) * a_scale * b_scale[j] + bias[j];
          if (std::string(activation) == "Relu") want = std::max(want, 0.0);
          if (std::string(activation) == "Gelu") want = 0.5 * want * (1 + std::erf(want / std::sqrt(2.0)));
          ASSERT_NEAR(y[i * n + j], want, 1e-5 * (1 + std::fabs(want)))
              << DataTypeName(f.type) << " zero point " << f.zero_point << " activation '" << activation << "' at " << i
              << ", " << j;
        }
      }
    }
  }
}

// An activation the fused kernel does not run is refused when the session is
// created, naming it.
TEST(ContribKernelsTest, FusedMatMulIntegerToFloatRefusesAnUnknownActivation) {
  ModelBuilder model(17);
  model.Opset("com.onyx", 1);
  model.Input("a", DataType::kUint8, {2, 4}).Output("y", DataType::kFloat, {2, 3});
  Tensor b = Tensor::Allocate(DataType::kInt8, {4, 3});
  std::fill(b.mutable_data<int8_t>(), b.mutable_data<int8_t>() + 12, int8_t{1});
  model.Initializer("b", b)
      .Initializer("a_scale", FloatTensor({}, {0.5f}))
      .Initializer("b_scale", FloatTensor({}, {2}));
  auto& node = model.Node("FusedMatMulIntegerToFloat", {"a", "b", "a_scale", "b_scale"}, {"y"});
  node.set_domain("com.onyx");
  node.add_attribute()->CopyFrom(StringAttr("activation", "Tanh"));
  Tensor a = Tensor::Allocate(DataType::kUint8, {2, 4});
  auto out = testing::RunModel(model, {{"a", Value(a)}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("unsupported activation 'Tanh'"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace onyx
