// Custom-operator libraries end to end: the example library's ops run inside
// sessions with values computed by hand; bad libraries and failing kernels
// give errors naming the library, the node and the cause, and harm nothing else.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "onyx/session.h"
#include "session/custom_op_library.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::FloatAttr;
using testing::FloatTensor;
using testing::ModelBuilder;

bool Contains(absl::string_view text, absl::string_view part) { return text.find(part) != absl::string_view::npos; }

std::string BadLibrary(const std::string& kind) {
  return std::string(ONYX_BAD_CUSTOM_OPS_DIR) + "/libbad_custom_ops_" + kind + ".so";
}

// out = Clamp01(Relu(ScaledAdd(x, y, alpha)))
ModelBuilder ExampleModel(bool with_alpha = true, std::vector<int64_t> dims = {2, 3}) {
  ModelBuilder m(13);
  m.Opset("com.example", 1);
  m.Input("x", DataType::kFloat, dims).Input("y", DataType::kFloat, dims).Output("out", DataType::kFloat, dims);
  onnx::NodeProto& add = m.Node("ScaledAdd", {"x", "y"}, {"s"}, "scaled_add");
  add.set_domain("com.example");
  if (with_alpha) *add.add_attribute() = FloatAttr("alpha", 0.5f);
  m.Node("Relu", {"s"}, {"r"}, "relu");
  m.Node("Clamp01", {"r"}, {"out"}, "clamp").set_domain("com.example");
  return m;
}

SessionOptions WithExampleOps() {
  SessionOptions options;
  options.model_name = "example";
  options.custom_op_libraries = {ONYX_EXAMPLE_OPS};
  return options;
}

TEST(CustomOpTest, RunsTheExampleLibrarysOpsBesideCpuKernels) {
  auto session = InferenceSession::CreateFromBytes(ExampleModel().Serialize(), WithExampleOps());
  ASSERT_TRUE(session.ok()) << session.status();
  const PartitionReport& report = (*session)->partition_report();
  EXPECT_EQ(report.nodes_per_provider.at("custom_ops"), 2);
  EXPECT_EQ(report.nodes_per_provider.at("cpu"), 1);
  EXPECT_TRUE(report.fallback_nodes.empty()) << report.ToString();
  EXPECT_EQ(report.memcpy_nodes, 0);

  Feeds feeds = {{"x", Value(FloatTensor({2, 3}, {0.2f, -1.0f, 0.9f, 0.4f, 3.0f, -0.1f}))},
                 {"y", Value(FloatTensor({2, 3}, {0.4f, 1.0f, 0.6f, -2.0f, -1.0f, 0.1f}))}};
  auto out = (*session)->Run(RunOptions(), feeds, {});
  ASSERT_TRUE(out.ok()) << out.status();
  // x + 0.5 y = 0.4, -0.5, 1.2, -0.6, 2.5, -0.05; Relu then clamp to [0, 1].
  const std::vector<float> expected = {0.4f, 0.0f, 1.0f, 0.0f, 1.0f, 0.0f};
  const Tensor& y = (*out)[0].tensor();
  ASSERT_EQ(y.num_elements(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y.data<float>()[i], expected[i], 1e-6) << i;
}

TEST(CustomOpTest, AKernelErrorFailsOnlyItsRunNamingTheNodeAndTheCause) {
  auto session = InferenceSession::CreateFromBytes(ExampleModel(true, {-1, -1}).Serialize(), WithExampleOps());
  ASSERT_TRUE(session.ok()) << session.status();
  Feeds mismatched = {{"x", Value(FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6}))},
                      {"y", Value(FloatTensor({3, 2}, {1, 2, 3, 4, 5, 6}))}};
  auto failed = (*session)->Run(RunOptions(), mismatched, {});
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(Contains(failed.status().message(), "scaled_add")) << failed.status();
  EXPECT_TRUE(Contains(failed.status().message(), "custom op library 'example_ops' failed")) << failed.status();
  EXPECT_TRUE(Contains(failed.status().message(), "needs A and B of one shape")) << failed.status();
  // The session still serves good requests.
  Feeds good = {{"x", Value(FloatTensor({1, 2}, {0.25f, 2.0f}))}, {"y", Value(FloatTensor({1, 2}, {0.5f, -8.0f}))}};
  auto out = (*session)->Run(RunOptions(), good, {});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FLOAT_EQ((*out)[0].tensor().data<float>()[0], 0.5f);
  EXPECT_FLOAT_EQ((*out)[0].tensor().data<float>()[1], 0.0f);
}

TEST(CustomOpTest, AKernelThatCannotBeCreatedFailsTheSessionNamingTheNode) {
  auto session = InferenceSession::CreateFromBytes(ExampleModel(/*with_alpha=*/false).Serialize(), WithExampleOps());
  ASSERT_FALSE(session.ok());
  EXPECT_TRUE(Contains(session.status().message(), "scaled_add")) << session.status();
  EXPECT_TRUE(Contains(session.status().message(), "needs the float attribute 'alpha'")) << session.status();
}

TEST(CustomOpTest, WithoutItsLibraryTheModelIsRefusedNamingTheOp) {
  SessionOptions options;
  auto session = InferenceSession::CreateFromBytes(ExampleModel().Serialize(), options);
  ASSERT_FALSE(session.ok());
  EXPECT_TRUE(Contains(session.status().message(), "ScaledAdd")) << session.status();
}

struct BadCase {
  std::string path;
  absl::StatusCode code;
  std::vector<std::string> parts;
};

TEST(CustomOpTest, BadLibrariesAreRefusedClearlyAndHarmNoOtherModel) {
  const std::vector<BadCase> cases = {
      {BadLibrary("abi"),
       absl::StatusCode::kFailedPrecondition,
       {"libbad_custom_ops_abi.so", "ABI version 42", "expects version 1"}},
      {BadLibrary("noentry"),
       absl::StatusCode::kFailedPrecondition,
       {"libbad_custom_ops_noentry.so", "OnyxCustomOpLibraryEntry"}},
      {BadLibrary("unresolved"),
       absl::StatusCode::kFailedPrecondition,
       {"cannot load", "onyx_custom_symbol_nothing_defines"}},
      {BadLibrary("tables"),
       absl::StatusCode::kFailedPrecondition,
       {"libbad_custom_ops_tables.so", "a custom domain must have a name"}},
      {"/nonexistent/libops.so", absl::StatusCode::kNotFound, {"/nonexistent/libops.so"}},
  };
  for (const BadCase& c : cases) {
    SessionOptions options;
    options.model_name = "victim";
    options.custom_op_libraries = {c.path};
    auto session = InferenceSession::CreateFromBytes(ExampleModel().Serialize(), options);
    ASSERT_FALSE(session.ok()) << c.path;
    EXPECT_EQ(session.status().code(), c.code) << session.status();
    EXPECT_TRUE(Contains(session.status().message(), "victim")) << session.status();
    for (const std::string& part : c.parts) {
      EXPECT_TRUE(Contains(session.status().message(), part)) << c.path << ": " << session.status();
    }
  }
  // Another model, with a good library, is unaffected.
  auto good = InferenceSession::CreateFromBytes(ExampleModel().Serialize(), WithExampleOps());
  ASSERT_TRUE(good.ok()) << good.status();
}

TEST(CustomOpTest, ALibraryIsLoadedOncePerPath) {
  auto first = LoadCustomOpLibrary(ONYX_EXAMPLE_OPS);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = LoadCustomOpLibrary(ONYX_EXAMPLE_OPS);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
  EXPECT_EQ((*first)->name, "example_ops");
  EXPECT_EQ((*first)->registry.size(), 2u);
}

}  // namespace
}  // namespace onyx
