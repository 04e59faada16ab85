#include "providers/cpu/tensor/cast.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace onyx {
namespace {

template <typename T>
Tensor Make(DataType type, const std::vector<T>& values) {
  Tensor t = Tensor::Allocate(type, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<T>()[i] = values[i];
  return t;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

TEST(CastTest, FloatToStringMatchesNumpyStr) {
  // Expected strings are what numpy prints for str(np.float32(v)); float32
  // 0.0001 is just below 1e-4, so numpy switches to scientific notation.
  Tensor src = Make<float>(DataType::kFloat,
                           {0.47892547f, 1.0f, -0.0f, 1e-5f, 123456.0f, 1e16f, 0.0001f, NAN, INFINITY, -INFINITY});
  Tensor dst = Tensor::Allocate(DataType::kString, src.dims());
  ASSERT_TRUE(CastElements(src, dst).ok());
  EXPECT_EQ(Values<std::string>(dst), std::vector<std::string>({"0.47892547", "1.0", "-0.0", "1e-05", "123456.0",
                                                                "1e+16", "1e-04", "nan", "inf", "-inf"}));
}

TEST(CastTest, DoubleAndIntegersToString) {
  Tensor d = Make<double>(DataType::kDouble, {0.1, 2.5e-7});
  Tensor ds = Tensor::Allocate(DataType::kString, d.dims());
  ASSERT_TRUE(CastElements(d, ds).ok());
  EXPECT_EQ(Values<std::string>(ds), std::vector<std::string>({"0.1", "2.5e-07"}));
  Tensor i = Make<int64_t>(DataType::kInt64, {-42, 7});
  Tensor is = Tensor::Allocate(DataType::kString, i.dims());
  ASSERT_TRUE(CastElements(i, is).ok());
  EXPECT_EQ(Values<std::string>(is), std::vector<std::string>({"-42", "7"}));
}

TEST(CastTest, StringToFloatParsesSpecialValues) {
  Tensor src = Make<std::string>(DataType::kString, {"0.5", "NaN", "INF", "+INF", "-INF", " 2 ", "1e3"});
  Tensor dst = Tensor::Allocate(DataType::kFloat, src.dims());
  ASSERT_TRUE(CastElements(src, dst).ok());
  std::vector<float> v = Values<float>(dst);
  EXPECT_EQ(v[0], 0.5f);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], INFINITY);
  EXPECT_EQ(v[3], INFINITY);
  EXPECT_EQ(v[4], -INFINITY);
  EXPECT_EQ(v[5], 2.0f);
  EXPECT_EQ(v[6], 1000.0f);
}

TEST(CastTest, StringToIntKeepsInt64Precision) {
  Tensor src = Make<std::string>(DataType::kString, {"9007199254740993", "-3"});
  Tensor dst = Tensor::Allocate(DataType::kInt64, src.dims());
  ASSERT_TRUE(CastElements(src, dst).ok());
  EXPECT_EQ(Values<int64_t>(dst), std::vector<int64_t>({9007199254740993LL, -3}));
}

TEST(CastTest, BadStringIsInvalidArgument) {
  Tensor src = Make<std::string>(DataType::kString, {"1", "abc"});
  Tensor dst = Tensor::Allocate(DataType::kFloat, src.dims());
  absl::Status s = CastElements(src, dst);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("abc"), std::string::npos);
}

// Bit patterns worked by hand: bfloat16 keeps the top 16 bits of a float, and
// the 16 bits dropped decide the rounding (ties to the even neighbour).
struct BFloat16Case {
  uint32_t float_bits;
  uint16_t want;
};
const BFloat16Case kBFloat16Cases[] = {
    {0x3f800000, 0x3f80},  // 1.0, exact
    {0x3f80c000, 0x3f81},  // 1 + 2^-8 + 2^-9: above halfway, up (truncation keeps 0x3f80)
    {0x3f807fff, 0x3f80},  // just below halfway: down
    {0x3f808000, 0x3f80},  // exactly halfway, even below: stays
    {0x3f818000, 0x3f82},  // exactly halfway, odd below: up to even
    {0xbf80c000, 0xbf81},  // negative: the magnitude rounds the same way
    {0x7f7fffff, 0x7f80},  // FLT_MAX rounds past the largest bfloat16: +inf
    {0xff800000, 0xff80},  // -inf
};

float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

TEST(CastTest, FloatToBFloat16RoundsToNearestEven) {
  std::vector<float> values;
  for (const BFloat16Case& c : kBFloat16Cases) values.push_back(FromBits(c.float_bits));
  values.push_back(NAN);
  Tensor src = Make<float>(DataType::kFloat, values);
  Tensor dst = Tensor::Allocate(DataType::kBFloat16, src.dims());
  ASSERT_TRUE(CastElements(src, dst).ok());
  for (size_t i = 0; i < std::size(kBFloat16Cases); ++i) {
    EXPECT_EQ(dst.data<uint16_t>()[i], kBFloat16Cases[i].want) << std::hex << kBFloat16Cases[i].float_bits;
    // The engine's one conversion agrees (data_type_test pins it on its own).
    EXPECT_EQ(FloatToBFloat16(values[i]), kBFloat16Cases[i].want) << std::hex << kBFloat16Cases[i].float_bits;
  }
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(dst.data<uint16_t>()[std::size(kBFloat16Cases)])));
}

TEST(CastTest, StringAndDoubleToBFloat16RoundLikeFloat) {
  // 1.013671875 = 1 + 2^-7 + 2^-8 + 2^-9 lies between bfloat16 1.0078125
  // (0x3f81) and 1.015625 (0x3f82), above halfway: 0x3f82 (truncation: 0x3f81).
  Tensor s = Make<std::string>(DataType::kString, {"1.013671875", "-1.013671875"});
  Tensor d = Make<double>(DataType::kDouble, {1.013671875, -1.013671875});
  for (const Tensor* src : {&s, &d}) {
    Tensor dst = Tensor::Allocate(DataType::kBFloat16, src->dims());
    ASSERT_TRUE(CastElements(*src, dst).ok());
    EXPECT_EQ(Values<uint16_t>(dst), std::vector<uint16_t>({0x3f82, 0xbf82})) << DataTypeName(src->type());
  }
}

TEST(CastTest, HalfRoundTripAndBool) {
  Tensor src = Make<float>(DataType::kFloat, {0.5f, -2.0f, 0.0f});
  Tensor h = Tensor::Allocate(DataType::kFloat16, src.dims());
  ASSERT_TRUE(CastElements(src, h).ok());
  Tensor b = Tensor::Allocate(DataType::kBool, src.dims());
  ASSERT_TRUE(CastElements(h, b).ok());
  EXPECT_EQ(Values<bool>(b), std::vector<bool>({true, true, false}));
  Tensor s = Tensor::Allocate(DataType::kString, src.dims());
  ASSERT_TRUE(CastElements(h, s).ok());
  EXPECT_EQ(Values<std::string>(s), std::vector<std::string>({"0.5", "-2.0", "0.0"}));
}

TEST(CastTest, HalfToStringIsNumpyShortestRoundTrip) {
  // float16 bit patterns and numpy's str() of each (1/3, 65504, 1e-5 and 6e-8
  // subnormal, 3.14159, -1234.5, the smallest normal 2^-14).
  Tensor h = Make<uint16_t>(DataType::kFloat16, {0x3555, 0x7bff, 0x00a8, 0x0001, 0x4248, 0xe4d2, 0x0400});
  Tensor s = Tensor::Allocate(DataType::kString, h.dims());
  ASSERT_TRUE(CastElements(h, s).ok());
  EXPECT_EQ(Values<std::string>(s),
            std::vector<std::string>({"0.3333", "65500.0", "1e-05", "6e-08", "3.14", "-1234.0", "6.104e-05"}));
}

TEST(CastTest, ScalarOfConvertsToEveryType) {
  auto i8 = ScalarOf(DataType::kInt8, 3.0);
  ASSERT_TRUE(i8.ok());
  EXPECT_EQ(i8->data<int8_t>()[0], 3);
  auto s = ScalarOf(DataType::kString, 1.5);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->data<std::string>()[0], "1.5");
}

TEST(CastTest, ElementCountMismatchIsAnError) {
  Tensor a = Tensor::Allocate(DataType::kFloat, {2});
  Tensor b = Tensor::Allocate(DataType::kFloat, {3});
  EXPECT_FALSE(CastElements(a, b).ok());
}

}  // namespace
}  // namespace onyx
