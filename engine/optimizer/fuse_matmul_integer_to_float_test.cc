// FuseMatMulIntegerToFloat on the dynamic quantizer's form of a Linear layer:
// DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(a_scale * b_scale) ->
// Add(bias) (-> activation). The fused graph's values are checked against the
// formula computed here, the forms the pass must leave alone by their op
// histograms.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "optimizer/optimizer_test_util.h"

namespace onyx {
namespace {

using testing::CompareLevels;
using testing::Count;
using testing::FloatTensor;
using testing::ModelBuilder;
using testing::RandomFloatTensor;

constexpr int64_t kK = 37, kN = 19;

Tensor Int8Weights(uint32_t seed, std::vector<int>* values) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> byte(-127, 127);
  Tensor w = Tensor::Allocate(DataType::kInt8, {kK, kN});
  values->resize(kK * kN);
  for (int64_t i = 0; i < kK * kN; ++i) {
    (*values)[i] = byte(gen);
    w.mutable_data<int8_t>()[i] = static_cast<int8_t>((*values)[i]);
  }
  return w;
}

Tensor Int8Scalar(int8_t v) {
  Tensor t = Tensor::Allocate(DataType::kInt8, {});
  t.mutable_data<int8_t>()[0] = v;
  return t;
}

// x [2, 3, K] -> the quantizer's Linear layer -> `last` ("" for none, or an
// op applied to the biased product), output "y".
ModelBuilder QuantizedLinear(const Tensor& w, const std::vector<float>& w_scale, const std::vector<float>& bias,
                             const std::string& last, int opset = 17) {
  ModelBuilder m(opset);
  m.Input("x", DataType::kFloat, {2, 3, kK}).Output("y", DataType::kFloat, {2, 3, kN});
  m.Initializer("w", w).Initializer("w_zp", Int8Scalar(0));
  m.Initializer("w_scale", FloatTensor({static_cast<int64_t>(w_scale.size())}, w_scale));
  m.Initializer("bias", FloatTensor({kN}, bias));
  m.Node("DynamicQuantizeLinear", {"x"}, {"xq", "x_scale", "x_zp"});
  m.Node("MatMulInteger", {"xq", "w", "x_zp", "w_zp"}, {"acc"});
  m.Node("Cast", {"acc"}, {"acc_f"}).add_attribute()->CopyFrom(testing::IntAttr("to", onnx::TensorProto::FLOAT));
  m.Node("Mul", {"x_scale", "w_scale"}, {"scale"});
  m.Node("Mul", {"acc_f", "scale"}, {"product"});
  m.Node("Add", {"bias", "product"}, {last.empty() ? "y" : "biased"});
  if (!last.empty()) m.Node(last, {"biased"}, {"y"});
  return m;
}

TEST(FuseMatMulIntegerToFloatTest, QuantizedLinearWithReluIsOneNodeWithTheFormulasValues) {
  std::vector<int> w_values;
  const Tensor w = Int8Weights(81, &w_values);
  std::vector<float> w_scale(kN);
  for (int64_t j = 0; j < kN; ++j) w_scale[j] = 0.004f + 0.0005f * static_cast<float>(j);
  const Tensor bias_t = RandomFloatTensor({kN}, 82);
  const std::vector<float> bias(bias_t.data<float>(), bias_t.data<float>() + kN);
  const ModelBuilder m = QuantizedLinear(w, w_scale, bias, "Relu");
  const Tensor x = RandomFloatTensor({2, 3, kK}, 83);

  auto session = InferenceSession::CreateFromBytes(m.Serialize(), SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status();
  const auto h = (*session)->op_histogram();
  EXPECT_EQ(Count(h, "FusedMatMulIntegerToFloat"), 1);
  EXPECT_EQ(Count(h, "DynamicQuantizeLinear"), 1);
  EXPECT_EQ(testing::Total(h), 2) << "MatMulInteger, Cast, both Muls, Add and Relu are gone";
  auto y = (*session)->Run(RunOptions(), {{"x", Value(x)}}, {"y"});
  ASSERT_TRUE(y.ok()) << y.status();
  const float* got = (*y)[0].tensor().data<float>();

  // DynamicQuantizeLinear's quantization: range including 0, scale over 255
  // steps, zero point rounded half to even.
  const float* px = x.data<float>();
  float lo = 0.f, hi = 0.f;
  for (int64_t i = 0; i < x.num_elements(); ++i) lo = std::min(lo, px[i]), hi = std::max(hi, px[i]);
  const float x_scale = (hi - lo) / 255.f;
  const float x_zp = std::nearbyint(std::clamp(-lo / x_scale, 0.f, 255.f));
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t j = 0; j < kN; ++j) {
      int64_t sum = 0;
      for (int64_t p = 0; p < kK; ++p) {
        const float q = std::clamp(std::nearbyint(px[r * kK + p] / x_scale) + x_zp, 0.f, 255.f);
        sum += static_cast<int64_t>(q - x_zp) * w_values[p * kN + j];
      }
      const double want = std::max(0.0, static_cast<double>(sum) * x_scale * w_scale[j] + bias[j]);
      ASSERT_NEAR(got[r * kN + j], want, 1e-5 * (1 + std::fabs(want))) << r << ", " << j;
    }
  }
}

// A per-tensor weight scale and the erf GELU of a transformer's MLP (Gelu-20):
// the same values as the unfused graph.
TEST(FuseMatMulIntegerToFloatTest, PerTensorScaleAndGeluMatchTheUnfusedGraph) {
  std::vector<int> w_values;
  const Tensor w = Int8Weights(84, &w_values);
  const Tensor bias = RandomFloatTensor({kN}, 85);
  ModelBuilder m =
      QuantizedLinear(w, {0.006f}, std::vector<float>(bias.data<float>(), bias.data<float>() + kN), "Gelu", 20);
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 3, kK}, 86))}});
  EXPECT_EQ(Count(c.before, "MatMulInteger"), 1);
  EXPECT_EQ(Count(c.after, "FusedMatMulIntegerToFloat"), 1);
  EXPECT_EQ(Count(c.after, "MatMulInteger") + Count(c.after, "Cast") + Count(c.after, "Mul") + Count(c.after, "Add") +
                Count(c.after, "Gelu"),
            0);
}

// Forms outside the fused op's contract stay as they are: the int32 product
// read twice, A's zero point per row, a weight scale that is not constant.
TEST(FuseMatMulIntegerToFloatTest, LeavesFormsItCannotFuse) {
  std::vector<int> w_values;
  const Tensor w = Int8Weights(87, &w_values);
  const std::vector<float> bias(kN, 0.25f);
  {
    ModelBuilder m = QuantizedLinear(w, {0.006f}, bias, "");
    m.Output("acc", DataType::kInt32, {2, 3, kN});
    // (CompareLevels reads float outputs only.)
    auto session = InferenceSession::CreateFromBytes(m.Serialize(), SessionOptions());
    ASSERT_TRUE(session.ok()) << session.status();
    EXPECT_EQ(Count((*session)->op_histogram(), "MatMulInteger"), 1) << "the int32 product is a graph output";
    EXPECT_EQ(Count((*session)->op_histogram(), "FusedMatMulIntegerToFloat"), 0);
  }
  {
    ModelBuilder m(17);
    m.Input("a", DataType::kUint8, {4, kK}).Input("s", DataType::kFloat, {}).Output("y", DataType::kFloat, {4, kN});
    Tensor a_zp = Tensor::Allocate(DataType::kUint8, {4});
    for (int i = 0; i < 4; ++i) a_zp.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(100 + i);
    m.Initializer("w", w).Initializer("a_zp", a_zp).Initializer("w_scale", FloatTensor({}, {0.01f}));
    m.Node("MatMulInteger", {"a", "w", "a_zp"}, {"acc"});
    m.Node("Cast", {"acc"}, {"acc_f"}).add_attribute()->CopyFrom(testing::IntAttr("to", onnx::TensorProto::FLOAT));
    m.Node("Mul", {"s", "w_scale"}, {"scale"});
    m.Node("Mul", {"acc_f", "scale"}, {"y"});
    Tensor a = Tensor::Allocate(DataType::kUint8, {4, kK});
    for (int64_t i = 0; i < a.num_elements(); ++i) a.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 7);
    auto c = CompareLevels(m, {{"a", Value(a)}, {"s", Value(FloatTensor({}, {0.5f}))}});
    EXPECT_EQ(Count(c.after, "MatMulInteger"), 1) << "a_zero_point per row";
  }
  {
    ModelBuilder m(17);
    m.Input("a", DataType::kUint8, {4, kK}).Input("s", DataType::kFloat, {}).Input("t", DataType::kFloat, {});
    m.Output("y", DataType::kFloat, {4, kN});
    m.Initializer("w", w);
    m.Node("MatMulInteger", {"a", "w"}, {"acc"});
    m.Node("Cast", {"acc"}, {"acc_f"}).add_attribute()->CopyFrom(testing::IntAttr("to", onnx::TensorProto::FLOAT));
    m.Node("Mul", {"s", "t"}, {"scale"});
    m.Node("Mul", {"acc_f", "scale"}, {"y"});
    Tensor a = Tensor::Allocate(DataType::kUint8, {4, kK});
    auto c = CompareLevels(
        m, {{"a", Value(a)}, {"s", Value(FloatTensor({}, {0.5f}))}, {"t", Value(FloatTensor({}, {0.25f}))}});
    EXPECT_EQ(Count(c.after, "MatMulInteger"), 1) << "neither scale is constant";
  }
}

// ONNX Runtime's fused form, DynamicQuantizeMatMul, followed by the bias Add
// and GELU its transformer optimizer leaves outside: one com.onyx node with
// the unfused graph's values.
TEST(FuseMatMulIntegerToFloatTest, DynamicQuantizeMatMulTakesBiasAndGelu) {
  std::vector<int> w_values;
  const Tensor w = Int8Weights(89, &w_values);
  ModelBuilder m(20);
  m.Opset("com.microsoft", 1);
  m.Input("x", DataType::kFloat, {2, 3, kK}).Output("y", DataType::kFloat, {2, 3, kN});
  m.Initializer("w", w).Initializer("w_zp", Int8Scalar(0)).Initializer("w_scale", FloatTensor({}, {0.007f}));
  m.Initializer("bias", RandomFloatTensor({kN}, 90));
  m.Node("DynamicQuantizeMatMul", {"x", "w", "w_scale", "w_zp"}, {"product"}).set_domain("com.microsoft");
  m.Node("Add", {"product", "bias"}, {"biased"});
  m.Node("Gelu", {"biased"}, {"y"});
  auto c = CompareLevels(m, {{"x", Value(RandomFloatTensor({2, 3, kK}, 91))}});
  EXPECT_EQ(Count(c.before, "DynamicQuantizeMatMul"), 1);
  EXPECT_EQ(Count(c.after, "FusedDynamicQuantizeMatMul"), 1);
  EXPECT_EQ(testing::Total(c.after), 1) << "the Add and the Gelu are inside";
}

}  // namespace
}  // namespace onyx
