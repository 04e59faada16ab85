// Bitwise{And,Or,Xor,Not}-18 with broadcasting and on signed values (two's
// complement bits), values worked out by hand.
#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::ModelBuilder;
using testing::RunModel;
using testing::TypedTensor;
using testing::Values;

template <typename T>
std::vector<T> RunBitwise(const std::string& op, DataType type, const std::vector<int64_t>& a_dims,
                          const std::vector<T>& a, const std::vector<int64_t>& b_dims, const std::vector<T>& b) {
  ModelBuilder m(18);
  m.Input("a", type, a_dims).Input("b", type, b_dims).Output("c", type, {-1, -1});
  m.Node(op, {"a", "b"}, {"c"});
  auto out = RunModel(m, {{"a", Value(TypedTensor<T>(type, a_dims, a))}, {"b", Value(TypedTensor<T>(type, b_dims, b))}},
                      {"c"});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? Values<T>((*out)[0]) : std::vector<T>();
}

TEST(BitwiseTest, BroadcastsARowAcrossRows) {
  // a = [[0b1100, 0b1010], [0xF0, 0x0F]], b = [0b0110, 0xFF] per column.
  const std::vector<uint8_t> a = {0b1100, 0b1010, 0xF0, 0x0F};
  const std::vector<uint8_t> b = {0b0110, 0xFF};
  EXPECT_EQ(RunBitwise<uint8_t>("BitwiseAnd", DataType::kUint8, {2, 2}, a, {2}, b),
            std::vector<uint8_t>({0b0100, 0b1010, 0x00, 0x0F}));
  EXPECT_EQ(RunBitwise<uint8_t>("BitwiseOr", DataType::kUint8, {2, 2}, a, {2}, b),
            std::vector<uint8_t>({0b1110, 0xFF, 0xF6, 0xFF}));
  EXPECT_EQ(RunBitwise<uint8_t>("BitwiseXor", DataType::kUint8, {2, 2}, a, {2}, b),
            std::vector<uint8_t>({0b1010, 0xF5, 0xF6, 0xF0}));
}

TEST(BitwiseTest, SignedValuesUseTwosComplement) {
  // -1 is all ones, -8 is ...11000: -1 & 5 = 5, -8 | 3 = -5, -8 ^ -1 = 7.
  EXPECT_EQ(RunBitwise<int64_t>("BitwiseAnd", DataType::kInt64, {1, 1}, {-1}, {1, 1}, {5}), std::vector<int64_t>({5}));
  EXPECT_EQ(RunBitwise<int64_t>("BitwiseOr", DataType::kInt64, {1, 1}, {-8}, {1, 1}, {3}), std::vector<int64_t>({-5}));
  EXPECT_EQ(RunBitwise<int64_t>("BitwiseXor", DataType::kInt64, {1, 1}, {-8}, {1, 1}, {-1}), std::vector<int64_t>({7}));
}

TEST(BitwiseTest, NotFlipsEveryBit) {
  // ~0 = -1, ~5 = -6, ~(-128) = 127 in int8; ~0x00F0 = 0xFF0F in uint16.
  ModelBuilder m(18);
  m.Input("a", DataType::kInt8, {3}).Input("b", DataType::kUint16, {1});
  m.Output("na", DataType::kInt8, {3}).Output("nb", DataType::kUint16, {1});
  m.Node("BitwiseNot", {"a"}, {"na"});
  m.Node("BitwiseNot", {"b"}, {"nb"});
  auto out = RunModel(m,
                      {{"a", Value(TypedTensor<int8_t>(DataType::kInt8, {3}, {0, 5, -128}))},
                       {"b", Value(TypedTensor<uint16_t>(DataType::kUint16, {1}, {0x00F0}))}},
                      {"na", "nb"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int8_t>((*out)[0]), std::vector<int8_t>({-1, -6, 127}));
  EXPECT_EQ(Values<uint16_t>((*out)[1]), std::vector<uint16_t>({0xFF0F}));
}

}  // namespace
}  // namespace onyx
