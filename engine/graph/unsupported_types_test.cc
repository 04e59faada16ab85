#include "graph/unsupported_types.h"

#include "gtest/gtest.h"
#include "onnx/defs/schema.h"
#include "tests/util/model_builder.h"

namespace onyx {
namespace {

using testing::ModelBuilder;

constexpr int32_t kUint4 = 21;
constexpr int32_t kFloat8E5M2 = 19;

TEST(UnsupportedTypesTest, NamesTheNewerTypes) {
  EXPECT_STREQ(NewerElementTypeName(17), "float8e4m3fn");
  EXPECT_STREQ(NewerElementTypeName(kUint4), "uint4");
  EXPECT_STREQ(NewerElementTypeName(23), "float4e2m1");
  EXPECT_EQ(NewerElementTypeName(static_cast<int32_t>(DataType::kBFloat16)), nullptr);
  EXPECT_EQ(NewerElementTypeName(99), nullptr);
}

TEST(UnsupportedTypesTest, NamesTheNodeInsideASubgraphWithItsVersion) {
  // An If whose then-branch casts to uint4 (declared in the branch's value_info).
  ModelBuilder body_builder(21);
  onnx::GraphProto body = body_builder.proto().graph();
  auto* cast = body.add_node();
  cast->set_op_type("Cast");
  cast->set_name("to_u4");
  cast->add_input("x");
  cast->add_output("u4");
  auto* vi = body.add_value_info();
  vi->set_name("u4");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(kUint4);
  ModelBuilder m(21);
  auto& if_node = m.Node("If", {"c"}, {"y"}, "branch");
  auto* attr = if_node.add_attribute();
  attr->set_name("then_branch");
  attr->set_type(onnx::AttributeProto::GRAPH);
  *attr->mutable_g() = body;
  const absl::Status s = CheckElementTypes(m.proto().graph(), {{"", 21}});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  // Cast's newest schema in onnx 1.12 is 13; a newer one registered later
  // would show here instead.
  const int cast_version = onnx::OpSchemaRegistry::Schema("Cast", 21, "")->since_version();
  EXPECT_NE(s.message().find("Cast-" + std::to_string(cast_version) + " 'to_u4': output 'u4' has element type uint4"),
            std::string::npos)
      << s;
}

TEST(UnsupportedTypesTest, NamesAValueNoNodeTouches) {
  ModelBuilder m(19);
  auto* in = m.proto().mutable_graph()->add_input();
  in->set_name("unused");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(kFloat8E5M2);
  const absl::Status s = CheckElementTypes(m.proto().graph(), {{"", 19}});
  EXPECT_NE(s.message().find("value 'unused' has element type float8e5m2"), std::string::npos) << s;
}

TEST(UnsupportedTypesTest, NamesAConstantNodeHoldingANewerType) {
  ModelBuilder m(19);
  auto& constant = m.Node("Constant", {}, {"c"}, "scale_f8");
  auto* attr = constant.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  attr->mutable_t()->set_data_type(kFloat8E5M2);
  attr->mutable_t()->add_dims(1);
  attr->mutable_t()->set_raw_data(std::string(1, '\0'));
  const absl::Status s = CheckElementTypes(m.proto().graph(), {{"", 19}});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("'scale_f8': attribute 'value' holds a tensor of element type float8e5m2"),
            std::string::npos)
      << s;
}

TEST(UnsupportedTypesTest, AcceptsTheTypesDataTypeHas) {
  ModelBuilder m(13);
  m.Input("x", DataType::kBFloat16, {2}).Output("y", DataType::kBFloat16, {2});
  m.Node("Relu", {"x"}, {"y"});
  EXPECT_TRUE(CheckElementTypes(m.proto().graph(), {{"", 13}}).ok());
}

}  // namespace
}  // namespace onyx
