// Cast-19/21/23 and CastLike-19 through a session: `saturate` is accepted
// (it only affects float8), and casts to or from the float8, int4 and float4
// types are refused when the session is built, naming the node, the op at
// the model's opset and the type.
#include <cmath>
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
using testing::Values;

constexpr DataType kFloat8E4M3 = static_cast<DataType>(17);
constexpr DataType kInt4 = static_cast<DataType>(22);
constexpr DataType kFloat4 = static_cast<DataType>(23);

TEST(Cast19Test, SaturateIsAcceptedAndLeavesFloat16Alone) {
  // float16's largest finite value is 65504: 70000 becomes +inf whatever
  // saturate says. The spec defines saturate for float8 targets only;
  // ONNX Runtime refuses saturate = 0 elsewhere, onyx ignores it.
  ModelBuilder m(19);
  m.Input("x", DataType::kFloat, {3}).Output("y", DataType::kFloat16, {3});
  auto& node = m.Node("Cast", {"x"}, {"y"});
  *node.add_attribute() = IntAttr("to", static_cast<int64_t>(DataType::kFloat16));
  *node.add_attribute() = IntAttr("saturate", 0);
  auto out = RunModel(m, {{"x", Value(FloatTensor({3}, {1.5f, -2.0f, 70000.0f}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  // Bit patterns: 1.5 = 0x3e00, -2 = 0xc000, +inf = 0x7c00.
  EXPECT_EQ(Values<uint16_t>((*out)[0]), std::vector<uint16_t>({0x3e00, 0xc000, 0x7c00}));
}

TEST(Cast19Test, Opset23CastRuns) {
  ModelBuilder m(23);
  m.Input("x", DataType::kFloat, {3}).Output("y", DataType::kInt32, {3});
  *m.Node("Cast", {"x"}, {"y"}).add_attribute() = IntAttr("to", static_cast<int64_t>(DataType::kInt32));
  auto out = RunModel(m, {{"x", Value(FloatTensor({3}, {1.9f, -2.9f, 3.0f}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0]), std::vector<int32_t>({1, -2, 3}));
}

// Builds a one-Cast model at `opset` from `from` to `to` and returns the
// status of building its session.
absl::Status BuildCast(int64_t opset, DataType from, DataType to) {
  ModelBuilder m(opset);
  m.Input("x", from, {2}).Output("y", to, {2});
  *m.Node("Cast", {"x"}, {"y"}, "narrow").add_attribute() = IntAttr("to", static_cast<int64_t>(to));
  SessionOptions options;
  options.model_name = "cast";
  return InferenceSession::CreateFromBytes(m.Serialize(), options).status();
}

void ExpectRefused(const absl::Status& s, const std::vector<std::string>& parts) {
  ASSERT_FALSE(s.ok());
  for (const std::string& part : parts) EXPECT_NE(s.message().find(part), std::string::npos) << part << ": " << s;
}

TEST(Cast19Test, Float8TargetOrSourceIsRefusedAtLoad) {
  ExpectRefused(BuildCast(19, DataType::kFloat, kFloat8E4M3),
                {"model 'cast'", "Cast-19 'narrow'", "output 'y' has element type float8e4m3fn", "does not support"});
  ExpectRefused(BuildCast(19, kFloat8E4M3, DataType::kFloat),
                {"model 'cast'", "Cast-19 'narrow'", "input 'x' has element type float8e4m3fn", "does not support"});
}

TEST(Cast19Test, Float8NoOpCastIsNotRemovedBeforeTheRefusal) {
  ModelBuilder m(19);
  m.Input("x", kFloat8E4M3, {2}).Output("z", kFloat8E4M3, {2});
  *m.Node("Cast", {"x"}, {"y"}, "same").add_attribute() = IntAttr("to", 17);
  m.Node("Identity", {"y"}, {"z"});
  SessionOptions options;
  options.model_name = "noop";
  ExpectRefused(InferenceSession::CreateFromBytes(m.Serialize(), options).status(),
                {"Cast-19 'same'", "float8e4m3fn", "does not support"});
}

TEST(Cast19Test, Int4AndFloat4AreRefusedAtLoad) {
  ExpectRefused(BuildCast(21, DataType::kFloat, kInt4), {"Cast-19 'narrow'", "element type int4", "does not support"});
  ExpectRefused(BuildCast(23, DataType::kFloat, kFloat4),
                {"Cast-19 'narrow'", "element type float4e2m1", "does not support"});
}

TEST(Cast19Test, CastLikeToFloat8IsRefusedAtLoad) {
  ModelBuilder m(19);
  m.Input("x", DataType::kFloat, {2}).Input("like", kFloat8E4M3, {1}).Output("y", kFloat8E4M3, {2});
  m.Node("CastLike", {"x", "like"}, {"y"}, "like8");
  SessionOptions options;
  options.model_name = "castlike";
  ExpectRefused(InferenceSession::CreateFromBytes(m.Serialize(), options).status(),
                {"CastLike-19 'like8'", "input 'like' has element type float8e4m3fn", "does not support"});
}

}  // namespace
}  // namespace onyx
