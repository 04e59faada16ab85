// The opset-22 bfloat16 bumps: each op ONNX 1.17 listed at version 22 for
// bfloat16 resolves to a version-22 schema equal to its version-21 one except
// that every float type constraint also allows bfloat16; a bfloat16 network at
// opset 22 loads with its shapes inferred (tests/models/bfloat16_test.py runs
// such networks against references).
#include <algorithm>
#include <set>
#include <string>

#include "graph/model_loader.h"
#include "graph/schemas/newer_opsets.h"
#include "gtest/gtest.h"
#include "onnx/defs/schema.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::IntsAttr;
using testing::ModelBuilder;

// ONNX 1.17's Changelog, "Version 22 of the default ONNX operator set".
constexpr const char* kOpset22Ops[] = {
    "Acos",
    "Acosh",
    "Asin",
    "Asinh",
    "Atan",
    "Atanh",
    "AveragePool",
    "Bernoulli",
    "Conv",
    "ConvTranspose",
    "Cos",
    "Cosh",
    "DeformConv",
    "Dropout",
    "Elu",
    "EyeLike",
    "GRU",
    "GlobalAveragePool",
    "GlobalLpPool",
    "GlobalMaxPool",
    "GridSample",
    "HardSigmoid",
    "HardSwish",
    "InstanceNormalization",
    "LSTM",
    "LpNormalization",
    "LpPool",
    "MaxPool",
    "MaxRoiPool",
    "MaxUnpool",
    "Mish",
    "Multinomial",
    "NegativeLogLikelihoodLoss",
    "RNN",
    "RandomNormal",
    "RandomNormalLike",
    "RandomUniform",
    "RandomUniformLike",
    "RoiAlign",
    "Round",
    "Selu",
    "Sin",
    "Sinh",
    "Softplus",
    "Softsign",
    "Tan",
    "ThresholdedRelu",
};

std::set<std::string> Types(const onnx::OpSchema& s, const std::string& param) {
  for (const auto& c : s.typeConstraintParams()) {
    if (c.type_param_str == param) return {c.allowed_type_strs.begin(), c.allowed_type_strs.end()};
  }
  return {};
}

TEST(Bfloat16SchemasTest, Opset22IsOpset21WithBfloat16BesideFloat) {
  RegisterNewerOpsetSchemas();
  for (const char* op : kOpset22Ops) {
    SCOPED_TRACE(op);
    const onnx::OpSchema* v22 = onnx::OpSchemaRegistry::Schema(op, 22, "");
    const onnx::OpSchema* v21 = onnx::OpSchemaRegistry::Schema(op, 21, "");
    ASSERT_NE(v22, nullptr);
    ASSERT_NE(v21, nullptr);
    EXPECT_EQ(v22->SinceVersion(), 22);
    ASSERT_EQ(v22->inputs().size(), v21->inputs().size());
    ASSERT_EQ(v22->outputs().size(), v21->outputs().size());
    for (size_t i = 0; i < v21->inputs().size(); ++i) {
      EXPECT_EQ(v22->inputs()[i].GetName(), v21->inputs()[i].GetName());
      EXPECT_EQ(v22->inputs()[i].GetOption(), v21->inputs()[i].GetOption());
    }
    std::set<std::string> attrs21, attrs22;
    for (const auto& [name, a] : v21->attributes()) attrs21.insert(name);
    for (const auto& [name, a] : v22->attributes()) attrs22.insert(name);
    EXPECT_EQ(attrs22, attrs21);
    bool widened = false;
    for (const auto& c : v21->typeConstraintParams()) {
      std::set<std::string> want(c.allowed_type_strs.begin(), c.allowed_type_strs.end());
      if (want.count("tensor(float)")) {
        want.insert("tensor(bfloat16)");
        widened = true;
      }
      EXPECT_EQ(Types(*v22, c.type_param_str), want) << c.type_param_str;
    }
    EXPECT_TRUE(widened) << "no float type constraint";
  }
  // Spot checks written out by hand.
  EXPECT_EQ(Types(*onnx::OpSchemaRegistry::Schema("Conv", 22, ""), "T"),
            (std::set<std::string>{"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"}));
  EXPECT_EQ(Types(*onnx::OpSchemaRegistry::Schema("Conv", 21, ""), "T").count("tensor(bfloat16)"), 0u);
  EXPECT_EQ(Types(*onnx::OpSchemaRegistry::Schema("Dropout", 22, ""), "T2"), (std::set<std::string>{"tensor(bool)"}));
  // Ops of opset 22 with no bfloat16 bump keep their old schema.
  EXPECT_LT(onnx::OpSchemaRegistry::Schema("Relu", 22, "")->SinceVersion(), 22);
}

// X, W bfloat16 -> Conv -> Elu -> MaxPool -> HardSwish -> GlobalAveragePool -> Y.
ModelBuilder Bfloat16Network(int opset) {
  ModelBuilder m(opset);
  m.Input("x", DataType::kBFloat16, {1, 2, 8, 8}).Input("w", DataType::kBFloat16, {4, 2, 3, 3});
  m.Output("y", DataType::kBFloat16, {1, 4, 1, 1});
  m.Node("Conv", {"x", "w"}, {"c"});
  m.Node("Elu", {"c"}, {"e"});
  auto& pool = m.Node("MaxPool", {"e"}, {"p"});
  *pool.add_attribute() = IntsAttr("kernel_shape", {2, 2});
  m.Node("HardSwish", {"p"}, {"h"});
  m.Node("GlobalAveragePool", {"h"}, {"y"});
  return m;
}

TEST(Bfloat16SchemasTest, Bfloat16NetworkLoadsAtOpset22WithShapes) {
  auto loaded = LoadModel(Bfloat16Network(22).Serialize(), LoadOptions{.model_name = "bf16"});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const ValueInfo* pooled = loaded->graph->FindValueInfo("p");
  ASSERT_NE(pooled, nullptr);
  EXPECT_EQ(pooled->type, DataType::kBFloat16);
  ASSERT_TRUE(pooled->has_shape);
  EXPECT_EQ(std::vector<int64_t>(pooled->dims.begin(), pooled->dims.end()), (std::vector<int64_t>{1, 4, 5, 5}));
}

}  // namespace
}  // namespace onyx
