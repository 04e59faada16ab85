#include "onyx/session.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "onnx/checker.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::ModelBuilder;

ModelBuilder SmallMlp() {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {-1, 2}).Output("y", DataType::kFloat, {-1, 2});
  m.Initializer("w", FloatTensor({2, 2}, {1, -1, 2, 0.5f}));
  m.Initializer("b", FloatTensor({2}, {0.5f, -3}));
  m.Node("MatMul", {"x", "w"}, {"xw"}, "matmul");
  m.Node("Add", {"xw", "b"}, {"sum"}, "add");
  m.Node("Identity", {"sum"}, {"id"}, "identity");
  m.Node("Relu", {"id"}, {"y"}, "relu");
  return m;
}

absl::StatusOr<std::unique_ptr<InferenceSession>> Make(const ModelBuilder& m, SessionOptions options = {}) {
  options.model_name = "test";
  return InferenceSession::CreateFromBytes(m.Serialize(), options);
}

TEST(InferenceSessionTest, RunsAndMatchesHandComputedValues) {
  auto session = Make(SmallMlp());
  ASSERT_TRUE(session.ok()) << session.status();
  // x = [[1, 2], [-1, 0]]; xw = [[5, 0], [-1, 1]]; +b = [[5.5, -3], [-0.5, -2]]; relu.
  Feeds feeds = {{"x", Value(FloatTensor({2, 2}, {1, 2, -1, 0}))}};
  auto out = (*session)->Run(RunOptions(), feeds, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& y = (*out)[0].tensor();
  ASSERT_EQ(y.dims(), Dims({2, 2}));
  const float* p = y.data<float>();
  EXPECT_FLOAT_EQ(p[0], 5.5f);
  EXPECT_FLOAT_EQ(p[1], 0.f);
  EXPECT_FLOAT_EQ(p[2], 0.f);
  EXPECT_FLOAT_EQ(p[3], 0.f);
  EXPECT_EQ((*session)->op_histogram().count("Identity"), 0u) << "Identity should be eliminated";
  EXPECT_EQ((*session)->inputs()[0].name, "x");
  EXPECT_EQ((*session)->inputs()[0].dims, std::vector<int64_t>({-1, 2}));
}

TEST(InferenceSessionTest, OptimizationDisabledKeepsIdentity) {
  SessionOptions options;
  options.optimization_level = OptimizationLevel::kDisabled;
  auto session = Make(SmallMlp(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ((*session)->op_histogram().at("Identity"), 1);
}

TEST(InferenceSessionTest, WritesOptimizedModelThatPassesTheChecker) {
  std::string path = ::testing::TempDir() + "/optimized.onnx";
  SessionOptions options;
  options.optimized_model_path = path;
  auto session = Make(SmallMlp(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::ifstream in(path, std::ios::binary);
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromIstream(&in));
  EXPECT_NO_THROW(onnx::checker::check_model(model));
  // MatMul+Add+Relu fused into one com.onyx FusedMatMul, Identity removed.
  ASSERT_EQ(model.graph().node_size(), 1);
  EXPECT_EQ(model.graph().node(0).domain(), "com.onyx");
  EXPECT_EQ(model.graph().node(0).op_type(), "FusedMatMul");
  ASSERT_EQ(model.graph().node(0).attribute_size(), 1);
  EXPECT_EQ(model.graph().node(0).attribute(0).s(), "Relu");
  // The rewritten model loads and runs again in a fresh session.
  auto reloaded = InferenceSession::Create(path, {});
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_TRUE((*reloaded)->Run(RunOptions(), {{"x", Value(FloatTensor({1, 2}, {1, 2}))}}, {}).ok());
}

TEST(InferenceSessionTest, RejectsBadFeedsNamingTheInput) {
  auto session = Make(SmallMlp());
  ASSERT_TRUE(session.ok());
  const InferenceSession& s = **session;
  auto expect_invalid = [&](const Feeds& feeds, const std::string& needle) {
    auto out = s.Run(RunOptions(), feeds, {});
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(out.status())) << out.status();
    EXPECT_NE(out.status().message().find(needle), absl::string_view::npos) << out.status();
  };
  expect_invalid({}, "missing input 'x'");
  expect_invalid({{"x", Value(FloatTensor({1, 2}, {1, 2}))}, {"q", Value(FloatTensor({1}, {1}))}},
                 "unknown input 'q'");
  expect_invalid({{"x", Value(Tensor::Allocate(DataType::kInt32, {1, 2}))}}, "expects element type float, received int32");
  expect_invalid({{"x", Value(FloatTensor({1, 3}, {1, 2, 3}))}}, "expects shape [d0,2], received [1,3]");
  expect_invalid({{"x", Value(FloatTensor({1, 2}, {1, 2}))}, {"x", Value(FloatTensor({1, 2}, {1, 2}))}},
                 "fed twice");
  auto bad_output = s.Run(RunOptions(), {{"x", Value(FloatTensor({1, 2}, {1, 2}))}}, {"nope"});
  EXPECT_TRUE(absl::IsInvalidArgument(bad_output.status()));
  // The session still works after the bad calls.
  EXPECT_TRUE(s.Run(RunOptions(), {{"x", Value(FloatTensor({1, 2}, {1, 2}))}}, {}).ok());
}

TEST(InferenceSessionTest, CreateErrorsNameTheProblem) {
  auto garbage = InferenceSession::CreateFromBytes("definitely not a model", {});
  EXPECT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("not a valid ONNX ModelProto"), absl::string_view::npos);

  ModelBuilder future(99);
  future.Input("x", DataType::kFloat, {1}).Output("y", DataType::kFloat, {1});
  future.Node("Relu", {"x"}, {"y"});
  auto too_new = Make(future);
  EXPECT_TRUE(absl::IsUnimplemented(too_new.status())) << too_new.status();
  EXPECT_NE(too_new.status().message().find("opset 99"), absl::string_view::npos);

  ModelBuilder missing(13);
  missing.Input("x", DataType::kFloat, {1}).Output("y", DataType::kFloat, {1});
  missing.Node("Add", {"x", "w_missing"}, {"y"}, "add");
  auto no_init = Make(missing);
  EXPECT_FALSE(no_init.ok());
  EXPECT_NE(no_init.status().message().find("w_missing"), absl::string_view::npos) << no_init.status();

  ModelBuilder unknown(13);
  unknown.Opset("com.example", 1);
  unknown.Input("x", DataType::kFloat, {1}).Output("y", DataType::kFloat, {1});
  unknown.Node("Mystery", {"x"}, {"y"}, "mystery").set_domain("com.example");
  auto no_kernel = Make(unknown);
  EXPECT_FALSE(no_kernel.ok());
  EXPECT_NE(no_kernel.status().message().find("Mystery 'mystery'"), absl::string_view::npos) << no_kernel.status();
}

TEST(InferenceSessionTest, LoadsExternalDataWeightsBesideTheModel) {
  std::string dir = ::testing::TempDir() + "/external_model";
  std::filesystem::create_directories(dir);
  ModelBuilder m = SmallMlp();
  // Move w's bytes to weights.bin (after 16 bytes of padding) and point at them.
  onnx::TensorProto* w = nullptr;
  for (auto& init : *m.proto().mutable_graph()->mutable_initializer()) {
    if (init.name() == "w") w = &init;
  }
  ASSERT_NE(w, nullptr);
  std::string bytes = std::string(16, '\0') + w->raw_data();
  std::ofstream(dir + "/weights.bin", std::ios::binary).write(bytes.data(), bytes.size());
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    auto* e = w->add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  add("location", "weights.bin");
  add("offset", "16");
  add("length", std::to_string(bytes.size() - 16));
  std::ofstream(dir + "/model.onnx", std::ios::binary) << m.Serialize();
  auto session = InferenceSession::Create(dir + "/model.onnx", {});
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run(RunOptions(), {{"x", Value(FloatTensor({1, 2}, {1, 2}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FLOAT_EQ((*out)[0].tensor().data<float>()[0], 5.5f);  // as in RunsAndMatchesHandComputedValues

  add("location", "../escape.bin");  // a second location entry: the last one wins
  std::ofstream(dir + "/bad.onnx", std::ios::binary) << m.Serialize();
  auto bad = InferenceSession::Create(dir + "/bad.onnx", {});
  EXPECT_FALSE(bad.ok());
}

TEST(InferenceSessionTest, ModelThatCrashesShapeInferenceIsRefusedNotFatal) {
  // A ConvTranspose weight of rank 1 makes ONNX 1.12's shape inference crash.
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 1, 3, 3}).Output("y", DataType::kFloat, {1, 1, 3, 3});
  m.Initializer("w", FloatTensor({3}, {1, 1, 1}));
  m.Node("ConvTranspose", {"x", "w"}, {"y"}, "deconv");
  auto session = Make(m);
  ASSERT_FALSE(session.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(session.status())) << session.status();
  EXPECT_NE(session.status().message().find("shape inference crashed"), absl::string_view::npos)
      << session.status();
  EXPECT_NE(session.status().message().find("model 'test'"), absl::string_view::npos);
  EXPECT_TRUE(Make(SmallMlp()).ok()) << "the process is fine and loads the next model";
}

TEST(InferenceSessionTest, CancelledRunReturnsCancelledAndSessionStaysUsable) {
  auto session = Make(SmallMlp());
  ASSERT_TRUE(session.ok());
  std::atomic<bool> stop{true};
  RunOptions cancelled;
  cancelled.terminate = &stop;
  Feeds feeds = {{"x", Value(FloatTensor({1, 2}, {1, 2}))}};
  auto out = (*session)->Run(cancelled, feeds, {});
  EXPECT_TRUE(absl::IsCancelled(out.status())) << out.status();
  EXPECT_TRUE((*session)->Run(RunOptions(), feeds, {}).ok());
}

TEST(InferenceSessionTest, ShapeOverridesFixDims) {
  SessionOptions options;
  options.input_shape_overrides["x"] = {4, -1};
  auto session = Make(SmallMlp(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ((*session)->inputs()[0].dims, std::vector<int64_t>({4, 2}));
  auto wrong = (*session)->Run(RunOptions(), {{"x", Value(FloatTensor({1, 2}, {1, 2}))}}, {});
  EXPECT_TRUE(absl::IsInvalidArgument(wrong.status()));

  options.input_shape_overrides["x"] = {4, 3};
  auto conflict = Make(SmallMlp(), options);
  EXPECT_FALSE(conflict.ok());
  EXPECT_NE(conflict.status().message().find("fixes it to 2"), absl::string_view::npos) << conflict.status();
}

}  // namespace
}  // namespace onyx
