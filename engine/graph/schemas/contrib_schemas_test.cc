// The com.microsoft schemas: models of ONNX Runtime's contrib operators pass
// the checker and ONNX shape inference gives their outputs the element types
// and shapes ONNX Runtime 1.30 produces (hand-derived from its CPU kernels),
// so shapes downstream stay known.
#include <string>
#include <vector>

#include "graph/model_loader.h"
#include "gtest/gtest.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::StringAttr;

constexpr char kMs[] = "com.microsoft";

// A model at opset 17 importing com.microsoft 1; every value in `probes`
// is routed through Identity to a graph output so that it survives pruning.
class ContribModel {
 public:
  ContribModel() : m_(17) { m_.Opset(kMs, 1); }
  ModelBuilder& builder() { return m_; }
  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& in,
                        const std::vector<std::string>& out) {
    onnx::NodeProto& n = m_.Node(op, in, out);
    n.set_domain(kMs);
    return n;
  }
  // Loads the model and returns the inferred (type, dims) of `value`; dims
  // are -1 where unknown. The graph output that keeps `value` is declared
  // with `expected`'s type and rank and unknown dims.
  std::pair<DataType, std::vector<int64_t>> Inferred(const std::string& value,
                                                     const std::pair<DataType, std::vector<int64_t>>& expected) {
    ModelBuilder copy = m_;
    copy.Node("Identity", {value}, {value + "_out"});
    copy.Output(value + "_out", expected.first, std::vector<int64_t>(expected.second.size(), -1));
    auto loaded = LoadModel(copy.Serialize(), LoadOptions{});
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    if (!loaded.ok()) return {DataType::kUndefined, {}};
    const ValueInfo* info = loaded->graph->FindValueInfo(value);
    if (info == nullptr || !info->has_shape) return {info ? info->type : DataType::kUndefined, {}};
    std::vector<int64_t> dims(info->dims.begin(), info->dims.end());
    for (size_t i = 0; i < dims.size(); ++i) {
      if (!info->dim_params[i].empty()) dims[i] = -1;
    }
    return {info->type, dims};
  }

 private:
  ModelBuilder m_;
};

using Shape = std::pair<DataType, std::vector<int64_t>>;
Shape Float(std::vector<int64_t> dims) { return {DataType::kFloat, std::move(dims)}; }

TEST(ContribSchemasTest, AttentionOutputAndPresent) {
  ContribModel m;
  m.builder().Input("x", DataType::kFloat, {2, 5, 8}).Input("past", DataType::kFloat, {2, 2, 4, 3, 4});
  m.builder().Initializer("w", FloatTensor({8, 24}, std::vector<float>(192, 0.f)));
  m.Node("Attention", {"x", "w", "", "", "past"}, {"y", "present"}).add_attribute()->CopyFrom(IntAttr("num_heads", 4));
  EXPECT_EQ(m.Inferred("y", Float({2, 5, 8})), Float({2, 5, 8}));
  EXPECT_EQ(m.Inferred("present", Float({2, 2, 4, 8, 2})), Float({2, 2, 4, 8, 2}));
}

TEST(ContribSchemasTest, AttentionQkvHiddenSizes) {
  ContribModel m;
  m.builder().Input("x", DataType::kFloat, {1, -1, 6});
  m.builder().Initializer("w", FloatTensor({6, 14}, std::vector<float>(84, 0.f)));
  onnx::NodeProto& n = m.Node("Attention", {"x", "w"}, {"y"});
  n.add_attribute()->CopyFrom(IntAttr("num_heads", 2));
  n.add_attribute()->CopyFrom(IntsAttr("qkv_hidden_sizes", {4, 4, 6}));
  EXPECT_EQ(m.Inferred("y", Float({1, -1, 6})), Float({1, -1, 6}));
}

TEST(ContribSchemasTest, MultiHeadAttentionOutputs) {
  ContribModel m;
  m.builder()
      .Input("q", DataType::kFloat, {2, 3, 8})
      .Input("k", DataType::kFloat, {2, 5, 8})
      .Input("v", DataType::kFloat, {2, 5, 6})
      .Input("pk", DataType::kFloat, {2, 2, 4, 4})
      .Input("pv", DataType::kFloat, {2, 2, 4, 3});
  m.Node("MultiHeadAttention", {"q", "k", "v", "", "", "", "pk", "pv"}, {"y", "present_k", "present_v", "qk"})
      .add_attribute()
      ->CopyFrom(IntAttr("num_heads", 2));
  EXPECT_EQ(m.Inferred("y", Float({2, 3, 6})), Float({2, 3, 6}));
  EXPECT_EQ(m.Inferred("present_k", Float({2, 2, 9, 4})), Float({2, 2, 9, 4}));
  EXPECT_EQ(m.Inferred("present_v", Float({2, 2, 9, 3})), Float({2, 2, 9, 3}));
  EXPECT_EQ(m.Inferred("qk", Float({2, 2, 3, 9})), Float({2, 2, 3, 9}));
}

TEST(ContribSchemasTest, SkipLayerNormalizationStatistics) {
  ContribModel m;
  m.builder().Input("x", DataType::kFloat, {2, -1, 8}).Input("s", DataType::kFloat, {2, -1, 8});
  m.builder().Initializer("g", FloatTensor({8}, std::vector<float>(8, 1.f)));
  m.Node("SkipLayerNormalization", {"x", "s", "g"}, {"y", "mean", "inv", "sum"});
  EXPECT_EQ(m.Inferred("y", Float({2, -1, 8})), Float({2, -1, 8}));
  EXPECT_EQ(m.Inferred("mean", Float({2, -1, 1})), Float({2, -1, 1}));
  EXPECT_EQ(m.Inferred("inv", Float({2, -1, 1})), Float({2, -1, 1}));
  EXPECT_EQ(m.Inferred("sum", Float({2, -1, 8})), Float({2, -1, 8}));
}

TEST(ContribSchemasTest, DefaultDomainLayerNormalizationBelowOpset17) {
  ModelBuilder b(12);
  b.Input("x", DataType::kFloat, {2, 3, 6});
  b.Initializer("g", FloatTensor({3, 6}, std::vector<float>(18, 1.f)));
  b.Node("LayerNormalization", {"x", "g"}, {"y", "mean", "inv"}).add_attribute()->CopyFrom(IntAttr("axis", 1));
  b.Node("Identity", {"mean"}, {"mean_out"});
  b.Output("mean_out", DataType::kFloat, {-1, -1, -1});
  b.Node("Identity", {"y"}, {"y_out"});
  b.Output("y_out", DataType::kFloat, {-1, -1, -1});
  auto loaded = LoadModel(b.Serialize(), LoadOptions{});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const ValueInfo* mean = loaded->graph->FindValueInfo("mean");
  ASSERT_NE(mean, nullptr);
  EXPECT_EQ(std::vector<int64_t>(mean->dims.begin(), mean->dims.end()), std::vector<int64_t>({2, 1, 1}));
  EXPECT_EQ(loaded->graph->FindValueInfo("y")->type, DataType::kFloat);
}

TEST(ContribSchemasTest, EmbedLayerNormalizationOutputs) {
  ContribModel m;
  m.builder().Input("ids", DataType::kInt32, {3, 7}).Input("mask", DataType::kInt32, {3, 7});
  m.builder()
      .Initializer("word", FloatTensor({10, 4}, std::vector<float>(40, 0.f)))
      .Initializer("pos", FloatTensor({8, 4}, std::vector<float>(32, 0.f)))
      .Initializer("g", FloatTensor({4}, std::vector<float>(4, 1.f)))
      .Initializer("b", FloatTensor({4}, std::vector<float>(4, 0.f)));
  m.Node("EmbedLayerNormalization", {"ids", "", "word", "pos", "", "g", "b", "mask"}, {"y", "mask_index", "sum"});
  EXPECT_EQ(m.Inferred("y", Float({3, 7, 4})), Float({3, 7, 4}));
  EXPECT_EQ(m.Inferred("mask_index", Shape(DataType::kInt32, {3})), Shape(DataType::kInt32, {3}));
  EXPECT_EQ(m.Inferred("sum", Float({3, 7, 4})), Float({3, 7, 4}));
}

TEST(ContribSchemasTest, FusedMatMulTransposes) {
  ContribModel m;
  m.builder().Input("a", DataType::kFloat, {4, 2, 3, 5}).Input("b", DataType::kFloat, {1, 3, 6, 4});
  onnx::NodeProto& n = m.Node("FusedMatMul", {"a", "b"}, {"y"});
  n.add_attribute()->CopyFrom(IntAttr("transBatchA", 1));  // A read as [2, 3, 4, 5]
  n.add_attribute()->CopyFrom(IntAttr("transA", 1));       // [2, 3, 5, 4]
  n.add_attribute()->CopyFrom(IntAttr("transB", 1));       // B read as [1, 3, 4, 6]
  EXPECT_EQ(m.Inferred("y", Float({2, 3, 5, 6})), Float({2, 3, 5, 6}));
}

TEST(ContribSchemasTest, FusedConvAndGemmReuseOnnxInference) {
  ContribModel m;
  m.builder().Input("x", DataType::kFloat, {1, 3, 9, 9}).Input("a", DataType::kFloat, {5, 7});
  m.builder()
      .Initializer("w", FloatTensor({4, 3, 3, 3}, std::vector<float>(108, 0.f)))
      .Initializer("b", FloatTensor({6, 7}, std::vector<float>(42, 0.f)));
  onnx::NodeProto& conv = m.Node("FusedConv", {"x", "w"}, {"y"});
  conv.add_attribute()->CopyFrom(IntsAttr("strides", {2, 2}));
  conv.add_attribute()->CopyFrom(StringAttr("activation", "Relu"));
  onnx::NodeProto& gemm = m.Node("FusedGemm", {"a", "b"}, {"z"});
  gemm.add_attribute()->CopyFrom(IntAttr("transB", 1));
  gemm.add_attribute()->CopyFrom(StringAttr("activation", "Tanh"));
  EXPECT_EQ(m.Inferred("y", Float({1, 4, 4, 4})), Float({1, 4, 4, 4}));
  EXPECT_EQ(m.Inferred("z", Float({5, 6})), Float({5, 6}));
}

TEST(ContribSchemasTest, QuantizedOutputs) {
  ContribModel m;
  m.builder()
      .Input("x", DataType::kFloat, {2, 3, 16})
      .Input("q", DataType::kUint8, {1, 4, 7, 6})
      .Input("c1", DataType::kInt8, {2, 3})
      .Input("c2", DataType::kInt8, {2, 5});
  Tensor b = Tensor::Allocate(DataType::kInt8, {16, 8});
  m.builder()
      .Initializer("b", b)
      .Initializer("s", FloatTensor({}, {0.1f}))
      .Initializer("zp", Tensor::Allocate(DataType::kUint8, {}))
      .Initializer("zp8", Tensor::Allocate(DataType::kInt8, {}));
  m.Node("DynamicQuantizeMatMul", {"x", "b", "s"}, {"y"});
  onnx::NodeProto& pool = m.Node("QLinearAveragePool", {"q", "s", "zp", "s", "zp"}, {"p"});
  pool.add_attribute()->CopyFrom(IntsAttr("kernel_shape", {3, 3}));
  pool.add_attribute()->CopyFrom(IntsAttr("strides", {2, 2}));
  pool.add_attribute()->CopyFrom(IntsAttr("pads", {1, 1, 1, 1}));
  m.Node("QLinearGlobalAveragePool", {"q", "s", "zp", "s", "zp"}, {"g"});
  m.Node("QLinearConcat", {"s", "zp8", "c1", "s", "zp8", "c2", "s", "zp8"}, {"c"})
      .add_attribute()
      ->CopyFrom(IntAttr("axis", 1));
  EXPECT_EQ(m.Inferred("y", Float({2, 3, 8})), Float({2, 3, 8}));
  EXPECT_EQ(m.Inferred("p", Shape(DataType::kUint8, {1, 4, 4, 3})), Shape(DataType::kUint8, {1, 4, 4, 3}));
  EXPECT_EQ(m.Inferred("g", Shape(DataType::kUint8, {1, 4, 1, 1})), Shape(DataType::kUint8, {1, 4, 1, 1}));
  EXPECT_EQ(m.Inferred("c", Shape(DataType::kInt8, {2, 8})), Shape(DataType::kInt8, {2, 8}));
}

TEST(ContribSchemasTest, UnknownAttributeFailsTheChecker) {
  ContribModel m;
  m.builder().Input("x", DataType::kFloat, {2});
  m.Node("Gelu", {"x"}, {"y"}).add_attribute()->CopyFrom(IntAttr("approximate", 1));
  m.builder().Node("Identity", {"y"}, {"y_out"});
  m.builder().Output("y_out", DataType::kFloat, {2});
  auto loaded = LoadModel(m.builder().Serialize(), LoadOptions{});
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("approximate"), std::string::npos) << loaded.status();
}

}  // namespace
}  // namespace onyx
