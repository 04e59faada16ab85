#include "onyx/data_type.h"

#include <cmath>
#include <cstring>

#include "gtest/gtest.h"

namespace onyx {
namespace {

TEST(DataTypeTest, ElementSizesMatchOnnx) {
  EXPECT_EQ(ElementSize(DataType::kFloat), 4u);
  EXPECT_EQ(ElementSize(DataType::kFloat16), 2u);
  EXPECT_EQ(ElementSize(DataType::kBFloat16), 2u);
  EXPECT_EQ(ElementSize(DataType::kInt64), 8u);
  EXPECT_EQ(ElementSize(DataType::kBool), 1u);
  EXPECT_EQ(ElementSize(DataType::kComplex128), 16u);
  EXPECT_EQ(ElementSize(DataType::kUndefined), 0u);
}

TEST(DataTypeTest, HalfConversionKnownValues) {
  // Bit patterns from the IEEE 754 binary16 tables.
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00);                   // overflow to +inf
  EXPECT_EQ(FloatToHalf(5.960464477539063e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(0.1f), 0x2e66);
  EXPECT_FLOAT_EQ(HalfToFloat(0x3555), 0.333251953125f);
  EXPECT_FLOAT_EQ(HalfToFloat(0x0001), 5.960464477539063e-8f);
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_TRUE(std::isinf(HalfToFloat(0xfc00)));
}

TEST(DataTypeTest, HalfRoundTripsEveryFiniteValue) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    if ((h & 0x7c00) == 0x7c00) continue;  // inf / nan
    EXPECT_EQ(FloatToHalf(HalfToFloat(h)), h) << std::hex << bits;
  }
}

TEST(DataTypeTest, BFloat16RoundsToNearestEven) {
  // The rule Cast follows too (providers/cpu/tensor/cast_test.cc): ties to even.
  auto from_bits = [](uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  };
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBFloat16(from_bits(0x3f80c000)), 0x3f81);  // above halfway: up
  EXPECT_EQ(FloatToBFloat16(from_bits(0x3f807fff)), 0x3f80);  // below halfway: down
  EXPECT_EQ(FloatToBFloat16(from_bits(0x3f808000)), 0x3f80);  // halfway, even below: stays
  EXPECT_EQ(FloatToBFloat16(from_bits(0x3f818000)), 0x3f82);  // halfway, odd below: up to even
  EXPECT_EQ(FloatToBFloat16(from_bits(0x7f7fffff)), 0x7f80);  // FLT_MAX: +inf
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(NAN))));
  EXPECT_FLOAT_EQ(BFloat16ToFloat(0x4049), 3.140625f);
}

}  // namespace
}  // namespace onyx
