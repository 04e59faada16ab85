#include "framework/kernel_registry.h"

#include "gtest/gtest.h"
#include "graph/model_loader.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::ModelBuilder;

class NoopKernel final : public OpKernel {
 public:
  explicit NoopKernel(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext&) const override { return absl::OkStatus(); }
};

LoadedModel LoadOrDie(const ModelBuilder& m) {
  auto loaded = LoadModel(m.Serialize(), LoadOptions{});
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  return *std::move(loaded);
}

TEST(KernelRegistryTest, MatchesOpsetAndTypes) {
  KernelRegistry registry;
  registry.Register(KernelDefBuilder("Relu").Since(6, 12).Types("T", {DataType::kFloat}).Build(),
                    MakeFactory<NoopKernel>());
  registry.Register(KernelDefBuilder("Relu").Since(13).Types("T", {DataType::kFloat}).Build(),
                    MakeFactory<NoopKernel>());
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  m.Node("Relu", {"x"}, {"y"});
  LoadedModel model = LoadOrDie(m);
  Node* node = model.graph->Nodes()[0];
  auto entry = registry.Lookup(*node, *model.graph);
  ASSERT_TRUE(entry.ok()) << entry.status();
  EXPECT_EQ((*entry)->def.since_version, 13);
}

TEST(KernelRegistryTest, ExplainsEachKindOfMiss) {
  KernelRegistry registry;
  registry.Register(KernelDefBuilder("Relu").Since(14).Types("T", {DataType::kFloat}).Build(),
                    MakeFactory<NoopKernel>());
  registry.Register(KernelDefBuilder("Abs").Since(13).Types("T", {DataType::kFloat}).Build(),
                    MakeFactory<NoopKernel>());

  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2}).Input("i", DataType::kInt32, {2});
  m.Output("y", DataType::kFloat, {2}).Output("z", DataType::kFloat, {2});
  m.Output("w", DataType::kInt32, {2}).Output("v", DataType::kFloat, {2});
  m.Node("Relu", {"x"}, {"y"});
  m.Node("Sigmoid", {"x"}, {"z"});
  m.Node("Abs", {"i"}, {"w"});
  m.Opset("custom.domain", 1);
  auto& custom = m.Node("MyOp", {"x"}, {"v"});
  custom.set_domain("custom.domain");
  LoadedModel model = LoadOrDie(m);
  auto nodes = model.graph->Nodes();

  auto relu = registry.Lookup(*nodes[0], *model.graph);
  EXPECT_TRUE(absl::IsNotFound(relu.status()));
  EXPECT_NE(relu.status().message().find("opset not covered"), absl::string_view::npos) << relu.status();

  auto sigmoid = registry.Lookup(*nodes[1], *model.graph);
  EXPECT_NE(sigmoid.status().message().find("no kernel for op Sigmoid"), absl::string_view::npos);

  auto abs = registry.Lookup(*nodes[2], *model.graph);
  EXPECT_NE(abs.status().message().find("type not supported"), absl::string_view::npos) << abs.status();
  EXPECT_NE(abs.status().message().find("int32"), absl::string_view::npos);

  auto custom_lookup = registry.Lookup(*nodes[3], *model.graph);
  EXPECT_NE(custom_lookup.status().message().find("wrong domain"), absl::string_view::npos);
}

}  // namespace
}  // namespace onyx
