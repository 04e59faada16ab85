// Attention-23 through a session: two small cases with values from ONNX
// Runtime 1.30, then random cases of every feature combination against a
// direct transcription of the formula (one loop per score, no batching).
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatAttr;
using testing::FloatTensor;
using testing::IntAttr;
using testing::ModelBuilder;
using testing::RandomFloatTensor;
using testing::RunModel;
using testing::TypedTensor;
using testing::Values;

void ExpectNear(const std::vector<float>& actual, const std::vector<float>& expected, float tolerance,
                const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (actual[i] == expected[i]) continue;  // also masked scores, -inf in both
    EXPECT_NEAR(actual[i], expected[i], tolerance) << what << "[" << i << "]";
  }
}

TEST(AttentionTest, GroupedQueryWithPastCausalMaskSoftcapAndProbabilities) {
  // Two query heads share one key/value head; one past position; the causal
  // mask hides the last key from the first query; softcap 1.5; the fourth
  // output holds the probabilities (mode 3).
  ModelBuilder m(23);
  m.Input("q", DataType::kFloat, {1, 2, 2, 2}).Output("y", DataType::kFloat, {1, 2, 2, 2});
  m.Output("pk", DataType::kFloat, {1, 1, 3, 2}).Output("pv", DataType::kFloat, {1, 1, 3, 2});
  m.Output("qk", DataType::kFloat, {1, 2, 2, 3});
  m.Initializer("k", FloatTensor({1, 1, 2, 2}, {1, 0, -1, 2}));
  m.Initializer("v", FloatTensor({1, 1, 2, 2}, {1, 2, 3, 4}));
  m.Initializer("mask", FloatTensor({2, 3}, {0, -1, 0.5f, 0.25f, 0, -0.5f}));
  m.Initializer("past_k", FloatTensor({1, 1, 1, 2}, {0.5f, 0.5f}));
  m.Initializer("past_v", FloatTensor({1, 1, 1, 2}, {-1, 0}));
  auto& n = m.Node("Attention", {"q", "k", "v", "mask", "past_k", "past_v"}, {"y", "pk", "pv", "qk"}, "attn");
  n.add_attribute()->CopyFrom(IntAttr("is_causal", 1));
  n.add_attribute()->CopyFrom(FloatAttr("softcap", 1.5f));
  n.add_attribute()->CopyFrom(IntAttr("qk_matmul_output_mode", 3));
  Tensor q = FloatTensor({1, 2, 2, 2}, {0.5f, -1, 1.5f, 0.25f, -0.5f, 2, 1, 1});
  auto out = RunModel(m, {{"q", Value(q)}}, {"y", "pk", "pv", "qk"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]),
             {-0.234025866f, 0.765974104f, 0.220433682f, 1.220433712f, -0.729761302f, 0.270238668f, 0.531235695f,
              1.531235695f},
             1e-6f, "Y");
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{0.5f, 0.5f, 1, 0, -1, 2}));
  EXPECT_EQ(Values<float>((*out)[2]), (std::vector<float>{-1, 0, 1, 2, 3, 4}));
  ExpectNear(Values<float>((*out)[3]),
             {0.617012918f, 0.382987052f, 0.0f, 0.451154798f, 0.487473696f, 0.061371595f, 0.864880621f, 0.135119334f,
              0.0f, 0.444213986f, 0.345954210f, 0.209831819f},
             1e-6f, "qk_matmul_output");
}

TEST(AttentionTest, ThreeDimensionalInputsAndAFullyMaskedQuery) {
  // Q [1, 2, 2 heads x 2], one key/value head of 3 keys; the second query
  // sees no key and gets zeros, as in ONNX Runtime.
  ModelBuilder m(23);
  m.Input("q", DataType::kFloat, {1, 2, 4}).Output("y", DataType::kFloat, {1, 2, 2});
  m.Initializer("k", FloatTensor({1, 3, 2}, {1, 1, 0, -1, 2, 0}));
  m.Initializer("v", FloatTensor({1, 3, 1}, {1, 2, 4}));
  m.Initializer("mask", TypedTensor<bool>(DataType::kBool, {2, 3}, {true, false, true, false, false, false}));
  auto& n = m.Node("Attention", {"q", "k", "v", "mask"}, {"y"}, "attn");
  n.add_attribute()->CopyFrom(IntAttr("q_num_heads", 2));
  n.add_attribute()->CopyFrom(IntAttr("kv_num_heads", 1));
  n.add_attribute()->CopyFrom(FloatAttr("scale", 0.5f));
  Tensor q = FloatTensor({1, 2, 4}, {1, 0, 0, 1, 0.5f, 0.5f, -0.5f, 0.5f});
  auto out = RunModel(m, {{"q", Value(q)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Values<float>((*out)[0]), {2.867377996f, 2.132622003f, 0, 0}, 1e-6f, "Y");
}

// One configuration of the random cases.
struct Case {
  bool three_d = false;
  int64_t batch = 2, q_heads = 2, kv_heads = 2, q_seq = 3, kv_seq = 3, past = 0, head = 4, v_head = 4;
  bool causal = false;
  int mask = 0;  // 0: none; 1: bool [B, 1, S, total]; 2: float [S, total]
  float scale = 0, softcap = 0;
  int mode = 0;
};

struct Inputs {
  Tensor q, k, v, past_k, past_v, mask;
};

// The formula, one score at a time. Returns Y (in Q's layout) and the
// qk_matmul_output of `c.mode`.
std::pair<std::vector<float>, std::vector<float>> Reference(const Case& c, const Inputs& in) {
  const int64_t total = c.past + c.kv_seq, group = c.q_heads / c.kv_heads;
  const float scale = c.scale > 0 ? c.scale : 1.f / std::sqrt(static_cast<float>(c.head));
  const float inf = std::numeric_limits<float>::infinity();
  auto at = [&](const Tensor& t, int64_t b, int64_t h, int64_t l, int64_t d, int64_t heads, int64_t len, int64_t size) {
    return c.three_d ? t.data<float>()[((b * len + l) * heads + h) * size + d]
                     : t.data<float>()[((b * heads + h) * len + l) * size + d];
  };
  auto key = [&](int64_t b, int64_t h, int64_t j, int64_t d) {
    if (j < c.past) return in.past_k.data<float>()[((b * c.kv_heads + h) * c.past + j) * c.head + d];
    return at(in.k, b, h, j - c.past, d, c.kv_heads, c.kv_seq, c.head);
  };
  auto value = [&](int64_t b, int64_t h, int64_t j, int64_t d) {
    if (j < c.past) return in.past_v.data<float>()[((b * c.kv_heads + h) * c.past + j) * c.v_head + d];
    return at(in.v, b, h, j - c.past, d, c.kv_heads, c.kv_seq, c.v_head);
  };
  std::vector<float> y(c.batch * c.q_heads * c.q_seq * c.v_head), qk(c.batch * c.q_heads * c.q_seq * total);
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t h = 0; h < c.q_heads; ++h) {
      for (int64_t s = 0; s < c.q_seq; ++s) {
        std::vector<float> x(total);
        float* rec = &qk[((b * c.q_heads + h) * c.q_seq + s) * total];
        for (int64_t j = 0; j < total; ++j) {
          float dot = 0;
          for (int64_t d = 0; d < c.head; ++d) {
            dot += at(in.q, b, h, s, d, c.q_heads, c.q_seq, c.head) * key(b, h / group, j, d);
          }
          x[j] = dot * scale;
          if (c.mode == 0) rec[j] = x[j];
          if (c.softcap > 0) x[j] = c.softcap * std::tanh(x[j] / c.softcap);
          if (c.mode == 1) rec[j] = x[j];
          if (c.mask == 1) x[j] += in.mask.data<bool>()[(b * c.q_seq + s) * total + j] ? 0.f : -inf;
          if (c.mask == 2) x[j] += in.mask.data<float>()[s * total + j];
          if (c.causal && j > s + c.past) x[j] = -inf;
          if (c.mode == 2) rec[j] = x[j];
        }
        float max = -inf, sum = 0;
        for (float e : x) max = std::max(max, e);
        for (float& e : x) sum += (e = max == -inf ? 0.f : std::exp(e - max));
        for (int64_t j = 0; j < total; ++j) {
          x[j] = sum > 0 ? x[j] / sum : 0.f;
          if (c.mode == 3) rec[j] = x[j];
        }
        for (int64_t e = 0; e < c.v_head; ++e) {
          float acc = 0;
          for (int64_t j = 0; j < total; ++j) acc += x[j] * value(b, h / group, j, e);
          const int64_t i = c.three_d ? ((b * c.q_seq + s) * c.q_heads + h) * c.v_head + e
                                      : ((b * c.q_heads + h) * c.q_seq + s) * c.v_head + e;
          y[i] = acc;
        }
      }
    }
  }
  return {y, qk};
}

void RunCase(const Case& c, uint32_t seed) {
  const int64_t total = c.past + c.kv_seq;
  auto dims = [&](int64_t heads, int64_t len, int64_t size) {
    return c.three_d ? std::vector<int64_t>{c.batch, len, heads * size}
                     : std::vector<int64_t>{c.batch, heads, len, size};
  };
  Inputs in;
  in.q = RandomFloatTensor(dims(c.q_heads, c.q_seq, c.head), seed);
  in.k = RandomFloatTensor(dims(c.kv_heads, c.kv_seq, c.head), seed + 1);
  in.v = RandomFloatTensor(dims(c.kv_heads, c.kv_seq, c.v_head), seed + 2);
  ModelBuilder m(23);
  m.Input("q", DataType::kFloat, dims(c.q_heads, c.q_seq, c.head));
  m.Output("y", DataType::kFloat, dims(c.q_heads, c.q_seq, c.v_head));
  m.Output("qk", DataType::kFloat, {c.batch, c.q_heads, c.q_seq, total});
  m.Initializer("k", in.k).Initializer("v", in.v);
  std::vector<std::string> inputs = {"q", "k", "v", "", "", ""};
  if (c.mask == 1) {
    Tensor r = RandomFloatTensor({c.batch, 1, c.q_seq, total}, seed + 3);
    in.mask = Tensor::Allocate(DataType::kBool, r.dims());
    for (int64_t i = 0; i < r.num_elements(); ++i) in.mask.mutable_data<bool>()[i] = r.data<float>()[i] > -0.6f;
  } else if (c.mask == 2) {
    in.mask = RandomFloatTensor({c.q_seq, total}, seed + 3);
  }
  if (c.mask != 0) {
    m.Initializer("mask", in.mask);
    inputs[3] = "mask";
  }
  if (c.past > 0) {
    in.past_k = RandomFloatTensor({c.batch, c.kv_heads, c.past, c.head}, seed + 4);
    in.past_v = RandomFloatTensor({c.batch, c.kv_heads, c.past, c.v_head}, seed + 5);
    m.Initializer("past_k", in.past_k).Initializer("past_v", in.past_v);
    inputs[4] = "past_k";
    inputs[5] = "past_v";
  }
  while (inputs.back().empty()) inputs.pop_back();
  auto& n = m.Node("Attention", inputs, {"y", "", "", "qk"}, "attn");
  if (c.three_d) {
    n.add_attribute()->CopyFrom(IntAttr("q_num_heads", c.q_heads));
    n.add_attribute()->CopyFrom(IntAttr("kv_num_heads", c.kv_heads));
  }
  if (c.causal) n.add_attribute()->CopyFrom(IntAttr("is_causal", 1));
  if (c.scale > 0) n.add_attribute()->CopyFrom(FloatAttr("scale", c.scale));
  if (c.softcap > 0) n.add_attribute()->CopyFrom(FloatAttr("softcap", c.softcap));
  n.add_attribute()->CopyFrom(IntAttr("qk_matmul_output_mode", c.mode));
  auto out = RunModel(m, {{"q", Value(in.q)}}, {"y", "qk"});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto [y, qk] = Reference(c, in);
  ExpectNear(Values<float>((*out)[0]), y, 2e-5f, "Y");
  ExpectNear(Values<float>((*out)[1]), qk, 2e-5f, "qk_matmul_output");
}

TEST(AttentionTest, MatchesTheFormulaOverFeatureCombinations) {
  Case mha;
  RunCase(mha, 10);
  Case gqa_past;
  gqa_past.q_heads = 4, gqa_past.kv_heads = 2, gqa_past.past = 5, gqa_past.causal = true, gqa_past.mask = 1;
  gqa_past.mode = 3;
  RunCase(gqa_past, 20);
  Case three_d;
  three_d.three_d = true, three_d.q_heads = 6, three_d.kv_heads = 2, three_d.q_seq = 4, three_d.kv_seq = 7;
  three_d.mask = 2, three_d.softcap = 0.7f, three_d.scale = 0.3f, three_d.mode = 1, three_d.v_head = 3;
  RunCase(three_d, 30);
  Case cross;
  cross.q_seq = 2, cross.kv_seq = 6, cross.causal = true, cross.head = 8, cross.v_head = 5, cross.mode = 2;
  cross.kv_heads = 1;
  RunCase(cross, 40);
  Case mqa_decode;  // one new token per step, many past tokens, one kv head
  mqa_decode.batch = 3, mqa_decode.q_heads = 8, mqa_decode.kv_heads = 1, mqa_decode.q_seq = 1;
  mqa_decode.kv_seq = 1, mqa_decode.past = 33, mqa_decode.causal = true, mqa_decode.head = 16, mqa_decode.v_head = 16;
  RunCase(mqa_decode, 50);
}

TEST(AttentionTest, OnlyOneOfThePastStatesIsRefused) {
  ModelBuilder m(23);
  m.Input("q", DataType::kFloat, {1, 1, 1, 2}).Output("y", DataType::kFloat, {1, 1, 1, 2});
  m.Initializer("k", FloatTensor({1, 1, 1, 2}, {1, 1}));
  m.Initializer("v", FloatTensor({1, 1, 1, 2}, {1, 1}));
  m.Initializer("past_k", FloatTensor({1, 1, 1, 2}, {1, 1}));
  m.Node("Attention", {"q", "k", "v", "", "past_k"}, {"y"}, "attn");
  auto out = RunModel(m, {{"q", Value(FloatTensor({1, 1, 1, 2}, {1, 1}))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("past_key and past_value must be given together"), std::string::npos)
      << out.status();
}

}  // namespace
}  // namespace onyx
