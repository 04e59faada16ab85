// Map-valued models (ZipMap after a classifier, DictVectorizer over a map
// input) are refused at load with the node, the op and the reason named.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/ml/ml_test_util.h"

namespace onyx {
namespace {

using testing::FloatsAttr;
using testing::FloatTensor;
using testing::IntsAttr;
using testing::MlModel;
using testing::RunModel;
using testing::StringsAttr;

TEST(MapOpsTest, ZipMapAfterAClassifierIsRefusedWithAHint) {
  auto m = MlModel("LinearClassifier", 1, {{"x", DataType::kFloat, {-1, 2}}}, {{"label", DataType::kInt64, {-1}}},
                   {FloatsAttr("coefficients", {0.3f, 0.1f, -0.2f, 0.4f}), FloatsAttr("intercepts", {0.05f, 0.0f}),
                    IntsAttr("classlabels_ints", {3, 4})});
  auto* graph = m.proto().mutable_graph();
  graph->mutable_node(0)->add_output("probabilities");
  auto* zipmap = graph->add_node();
  zipmap->set_op_type("ZipMap");
  zipmap->set_domain("ai.onnx.ml");
  zipmap->set_name("zip");
  zipmap->add_input("probabilities");
  zipmap->add_output("output_probability");
  *zipmap->add_attribute() = IntsAttr("classlabels_int64s", {3, 4});
  auto* out = graph->add_output();
  out->set_name("output_probability");
  auto* map = out->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_map_type();
  map->set_key_type(onnx::TensorProto::INT64);
  map->mutable_value_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto result = RunModel(m, {{"x", Value(FloatTensor({1, 2}, {1.0f, 2.0f}))}}, {"label"});
  ASSERT_FALSE(result.ok());
  const std::string message(result.status().message());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(message.find("ZipMap 'zip' (ai.onnx.ml.ZipMap) outputs a sequence of maps"), std::string::npos) << message;
  EXPECT_NE(message.find("zipmap"), std::string::npos) << message;
}

TEST(MapOpsTest, DictVectorizerOverAMapInputIsRefused) {
  auto m =
      MlModel("DictVectorizer", 1, {}, {{"y", DataType::kFloat, {-1}}}, {StringsAttr("string_vocabulary", {"a", "b"})});
  auto* graph = m.proto().mutable_graph();
  auto* in = graph->add_input();
  in->set_name("x");
  auto* map = in->mutable_type()->mutable_map_type();
  map->set_key_type(onnx::TensorProto::STRING);
  map->mutable_value_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  graph->mutable_node(0)->add_input("x");
  auto result = RunModel(m, {}, {"y"});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("DictVectorizer 'ml' (ai.onnx.ml.DictVectorizer) takes a map"),
            std::string::npos)
      << result.status();
}

}  // namespace
}  // namespace onyx
