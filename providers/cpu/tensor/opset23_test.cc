// Ops whose versions 19-23 only widen their type lists (to float8 / int4 /
// float4, which onyx refuses) keep resolving to their older schemas and
// kernels: a model importing opset 23 with Constant, Identity, Reshape,
// Flatten, Transpose, Squeeze, Unsqueeze, Shape, Size and ConstantOfShape
// loads and runs. Also Equal-19 on strings. Expected values worked by hand.
#include <string>
#include <vector>

#include "graph/tensor_proto.h"
#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::IntsAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::Values;

onnx::AttributeProto TensorAttr(const std::string& name, const Tensor& value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::TENSOR);
  *a.mutable_t() = TensorToProto(value, name);
  return a;
}

TEST(Opset23Test, ShapeOpsOfTypeOnlyBumpsRun) {
  // x [2, 3] -> Identity -> Reshape [3, 1, 2] -> Transpose (2, 0, 1) [2, 3, 1]
  // -> Squeeze (axis 2) [2, 3] -> Unsqueeze (axis 0) [1, 2, 3] -> Flatten
  // (axis 2) [2, 3]; Shape and Size of that; ConstantOfShape(Shape) of 7s;
  // a Constant [1] added through Reshape's shape input.
  ModelBuilder m(23);
  m.Input("x", DataType::kFloat, {2, 3})
      .Output("flat", DataType::kFloat, {2, 3})
      .Output("shape", DataType::kInt64, {2})
      .Output("size", DataType::kInt64, {})
      .Output("sevens", DataType::kFloat, {-1, -1});
  *m.Node("Constant", {}, {"target"}).add_attribute() = TensorAttr("value", Int64Tensor({3}, {3, 1, 2}));
  m.Node("Identity", {"x"}, {"id"});
  m.Node("Reshape", {"id", "target"}, {"r"});
  *m.Node("Transpose", {"r"}, {"t"}).add_attribute() = IntsAttr("perm", {2, 0, 1});
  m.Initializer("ax2", Int64Tensor({1}, {2}));
  m.Initializer("ax0", Int64Tensor({1}, {0}));
  m.Node("Squeeze", {"t", "ax2"}, {"sq"});
  m.Node("Unsqueeze", {"sq", "ax0"}, {"us"});
  *m.Node("Flatten", {"us"}, {"flat"}).add_attribute() = IntAttr("axis", 2);
  m.Node("Shape", {"flat"}, {"shape"});
  m.Node("Size", {"flat"}, {"size"});
  *m.Node("ConstantOfShape", {"shape"}, {"sevens"}).add_attribute() = TensorAttr("value", FloatTensor({1}, {7}));
  auto out = RunModel(m, {{"x", Value(FloatTensor({2, 3}, {0, 1, 2, 3, 4, 5}))}}, {"flat", "shape", "size", "sevens"});
  ASSERT_TRUE(out.ok()) << out.status();
  // Reshape keeps the order [[0,1]],[[2,3]],[[4,5]]; the transpose puts axis 2
  // first: t[i][j][0] = r[j][0][i] -> [[0, 2, 4], [1, 3, 5]].
  EXPECT_EQ((*out)[0].tensor().dims(), Dims({2, 3}));
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({0, 2, 4, 1, 3, 5}));
  EXPECT_EQ(Values<int64_t>((*out)[1]), std::vector<int64_t>({2, 3}));
  EXPECT_EQ(Values<int64_t>((*out)[2]), std::vector<int64_t>({6}));
  EXPECT_EQ(Values<float>((*out)[3]), std::vector<float>(6, 7.0f));
}

TEST(Opset23Test, ConstantOfShapeBFloat16AtOpset20) {
  ModelBuilder m(20);
  m.Input("s", DataType::kInt64, {1}).Output("y", DataType::kBFloat16, {-1});
  Tensor value = Tensor::Allocate(DataType::kBFloat16, {1});
  value.mutable_data<uint16_t>()[0] = 0x4049;  // 3.140625
  *m.Node("ConstantOfShape", {"s"}, {"y"}).add_attribute() = TensorAttr("value", value);
  auto out = RunModel(m, {{"s", Value(Int64Tensor({1}, {3}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().type(), DataType::kBFloat16);
  EXPECT_EQ(Values<uint16_t>((*out)[0]), std::vector<uint16_t>(3, 0x4049));
}

TEST(Opset23Test, EqualComparesStrings) {
  for (int64_t opset : {19, 23}) {
    ModelBuilder m(opset);
    m.Input("a", DataType::kString, {2, 3}).Input("b", DataType::kString, {3}).Output("y", DataType::kBool, {2, 3});
    m.Node("Equal", {"a", "b"}, {"y"});
    auto a = testing::TypedTensor<std::string>(DataType::kString, {2, 3}, {"x", "", "yz", "y", "abc", "YZ"});
    auto b = testing::TypedTensor<std::string>(DataType::kString, {3}, {"x", "abc", "yz"});
    auto out = RunModel(m, {{"a", Value(a)}, {"b", Value(b)}}, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values<bool>((*out)[0]), std::vector<bool>({true, false, true, false, true, false})) << opset;
  }
}

}  // namespace
}  // namespace onyx
