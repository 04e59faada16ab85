// QuantizeLinear / DequantizeLinear at opsets 19-23: blocked quantization,
// output_dtype, 16-bit types, and the refusal of types onyx cannot hold.
// Expected values come from ONNX Runtime 1.30 on the same models and are
// worked by hand in the comments.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatTensor;
using testing::IntAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::TypedTensor;
using testing::Values;

TEST(QuantizeTest, BlockedQuantizeUsesOneScalePerBlock) {
  // x [2,5], axis 1, block 3: columns 0-2 use scale column 0, 3-4 column 1.
  // Row 0: 1/0.5+1 = 3, 2.5/0.5+1 = 6, -3/0.5+1 = -5, 4/2-2 = 0, 3.75 -> 4, -2 = 2.
  // Row 1: 0.3/0.25 = 1.2 -> 1, -1.2/0.25 = -4.8 -> -5, 400 saturates to 127,
  // 5/1+3 = 8, 6/1+3 = 9.
  ModelBuilder m(21);
  m.Input("x", DataType::kFloat, {2, 5}).Output("y", DataType::kInt8, {2, 5});
  m.Initializer("s", FloatTensor({2, 2}, {0.5f, 2.0f, 0.25f, 1.0f}));
  m.Initializer("z", TypedTensor<int8_t>(DataType::kInt8, {2, 2}, {1, -2, 0, 3}));
  auto& n = m.Node("QuantizeLinear", {"x", "s", "z"}, {"y"}, "q");
  n.add_attribute()->CopyFrom(IntAttr("axis", 1));
  n.add_attribute()->CopyFrom(IntAttr("block_size", 3));
  Tensor x = FloatTensor({2, 5}, {1.0f, 2.5f, -3.0f, 4.0f, 7.5f, 0.3f, -1.2f, 100.0f, 5.0f, 6.0f});
  auto out = RunModel(m, {{"x", Value(x)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int8_t>((*out)[0]), (std::vector<int8_t>{3, 6, -5, 0, 2, 1, -5, 127, 8, 9}));
}

TEST(QuantizeTest, BlockedDequantizeAlongTheFirstAxis) {
  // x [2,4], axis 0, block 2: one block row covers both rows; zero points
  // 1..4, scales 0.5, 2, 3, 4. Row 0 is x - zp = 0; row 1: 4*0.5, 4*2, 4*3, 4*4.
  ModelBuilder m(21);
  m.Input("x", DataType::kInt8, {2, 4}).Output("y", DataType::kFloat, {2, 4});
  m.Initializer("s", FloatTensor({1, 4}, {0.5f, 2.0f, 3.0f, 4.0f}));
  m.Initializer("z", TypedTensor<int8_t>(DataType::kInt8, {1, 4}, {1, 2, 3, 4}));
  auto& n = m.Node("DequantizeLinear", {"x", "s", "z"}, {"y"}, "dq");
  n.add_attribute()->CopyFrom(IntAttr("axis", 0));
  n.add_attribute()->CopyFrom(IntAttr("block_size", 2));
  Tensor x = TypedTensor<int8_t>(DataType::kInt8, {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto out = RunModel(m, {{"x", Value(x)}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), (std::vector<float>{0, 0, 0, 0, 2, 8, 12, 16}));
}

TEST(QuantizeTest, LastBlockMayBeShort) {
  // 5 elements, block 4: scales 1 for elements 0-3, 2 for element 4 (4/2 = 2).
  ModelBuilder m(21);
  m.Input("x", DataType::kFloat, {5}).Output("y", DataType::kUint8, {5});
  m.Initializer("s", FloatTensor({2}, {1.0f, 2.0f}));
  auto& n = m.Node("QuantizeLinear", {"x", "s"}, {"y"}, "q");
  n.add_attribute()->CopyFrom(IntAttr("axis", 0));
  n.add_attribute()->CopyFrom(IntAttr("block_size", 4));
  auto out = RunModel(m, {{"x", Value(FloatTensor({5}, {0, 1, 2, 3, 4}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{0, 1, 2, 3, 2}));
}

TEST(QuantizeTest, OutputDtypeChoosesTheTypeWithoutAZeroPoint) {
  // int16 output, scale 0.5: y = 2x, 40000 saturates to 32767.
  ModelBuilder m(21);
  m.Input("x", DataType::kFloat, {4}).Output("y", DataType::kInt16, {4});
  m.Initializer("s", FloatTensor({}, {0.5f}));
  m.Node("QuantizeLinear", {"x", "s"}, {"y"}, "q")
      .add_attribute()
      ->CopyFrom(IntAttr("output_dtype", static_cast<int64_t>(DataType::kInt16)));
  auto out = RunModel(m, {{"x", Value(FloatTensor({4}, {0, 1.25f, -3, 20000}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int16_t>((*out)[0]), (std::vector<int16_t>{0, 2, -6, 32767}));
}

TEST(QuantizeTest, Opset23AcceptsPrecisionAndDequantizesToOutputDtype) {
  ModelBuilder m(23);
  m.Input("x", DataType::kFloat, {3}).Output("y", DataType::kUint8, {3}).Output("r", DataType::kFloat16, {3});
  m.Initializer("s", FloatTensor({}, {0.25f}));
  m.Node("QuantizeLinear", {"x", "s"}, {"y"}, "q")
      .add_attribute()
      ->CopyFrom(IntAttr("precision", static_cast<int64_t>(DataType::kFloat)));
  m.Node("DequantizeLinear", {"y", "s"}, {"r"}, "dq")
      .add_attribute()
      ->CopyFrom(IntAttr("output_dtype", static_cast<int64_t>(DataType::kFloat16)));
  // 0.3/0.25 = 1.2 -> 1 -> 0.25; 0.375/0.25 = 1.5 -> 2 (half to even) -> 0.5.
  auto out = RunModel(m, {{"x", Value(FloatTensor({3}, {0.3f, 0.375f, -1}))}}, {"y", "r"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<uint8_t>((*out)[0]), (std::vector<uint8_t>{1, 2, 0}));
  std::vector<float> r;
  for (uint16_t h : Values<uint16_t>((*out)[1])) r.push_back(HalfToFloat(h));
  EXPECT_EQ(r, (std::vector<float>{0.25f, 0.5f, 0.0f}));
}

TEST(QuantizeTest, ScaleOfTheInputsRankNeedsBlockSize) {
  ModelBuilder m(21);
  m.Input("x", DataType::kFloat, {2, 4}).Output("y", DataType::kUint8, {2, 4});
  m.Initializer("s", FloatTensor({2, 2}, {1, 1, 1, 1}));
  m.Node("QuantizeLinear", {"x", "s"}, {"y"}, "q");
  auto out = RunModel(m, {{"x", Value(FloatTensor({2, 4}, std::vector<float>(8, 1.0f)))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("needs block_size"), std::string::npos) << out.status();
}

TEST(QuantizeTest, BlockedScaleWithTheWrongBlockCountIsRefused) {
  // 4 columns in blocks of 2 need 2 scale columns, not 3.
  ModelBuilder m(21);
  m.Input("x", DataType::kFloat, {2, 4}).Output("y", DataType::kUint8, {2, 4});
  m.Initializer("s", FloatTensor({2, 3}, {1, 1, 1, 1, 1, 1}));
  m.Node("QuantizeLinear", {"x", "s"}, {"y"}, "q").add_attribute()->CopyFrom(IntAttr("block_size", 2));
  auto out = RunModel(m, {{"x", Value(FloatTensor({2, 4}, std::vector<float>(8, 1.0f)))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("blocked scale must be [2,2]"), std::string::npos) << out.status();
}

TEST(QuantizeTest, Int4OutputIsRefusedAtLoadNamingTheNode) {
  constexpr int64_t kInt4 = 22;
  ModelBuilder m(21);
  // The int4 value is internal: only the attribute says what it is.
  m.Input("x", DataType::kFloat, {4}).Output("r", DataType::kFloat, {4});
  m.Initializer("s", FloatTensor({}, {1.0f}));
  m.Node("QuantizeLinear", {"x", "s"}, {"y"}, "q4").add_attribute()->CopyFrom(IntAttr("output_dtype", kInt4));
  m.Node("DequantizeLinear", {"y", "s"}, {"r"}, "dq4");
  auto out = RunModel(m, {{"x", Value(FloatTensor({4}, {0, 1, 2, 3}))}}, {"r"});
  ASSERT_FALSE(out.ok());
  const std::string message(out.status().message());
  EXPECT_NE(message.find("QuantizeLinear-21 'q4'"), std::string::npos) << message;
  EXPECT_NE(message.find("int4"), std::string::npos) << message;
}

TEST(QuantizeTest, Float8ZeroPointIsRefusedAtLoadNamingTheNode) {
  constexpr int32_t kFloat8E4M3FN = 17;
  ModelBuilder m(19);
  m.Input("x", DataType::kFloat, {2});
  m.proto().mutable_graph()->add_output()->set_name("y");
  m.Initializer("s", FloatTensor({}, {1.0f}));
  onnx::TensorProto* zp = m.proto().mutable_graph()->add_initializer();
  zp->set_name("z");
  zp->set_data_type(kFloat8E4M3FN);
  zp->set_raw_data(std::string(1, '\0'));
  m.Node("QuantizeLinear", {"x", "s", "z"}, {"y"}, "q8");
  auto out = RunModel(m, {{"x", Value(FloatTensor({2}, {0, 1}))}}, {"y"});
  ASSERT_FALSE(out.ok());
  const std::string message(out.status().message());
  EXPECT_NE(message.find("QuantizeLinear-19 'q8'"), std::string::npos) << message;
  EXPECT_NE(message.find("float8e4m3fn"), std::string::npos) << message;
}

}  // namespace
}  // namespace onyx
