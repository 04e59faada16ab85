#include "tests/conformance/value_compare.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace onyx::conformance {
namespace {

template <typename T>
Tensor Make(DataType type, std::vector<int64_t> dims, std::vector<T> values) {
  Tensor t = Tensor::Allocate(type, dims);
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<T>()[i] = values[i];
  return t;
}

Tensor Floats(std::vector<float> values) {
  return Make<float>(DataType::kFloat, {static_cast<int64_t>(values.size())}, values);
}

TEST(ValueCompareTest, FloatWithinToleranceMatches) {
  // |1.0009 - 1| = 9e-4 <= 1e-7 + 1e-3 * 1.
  EXPECT_TRUE(CompareValues(Floats({1.0f, 0.0f}), Floats({1.0009f, 5e-8f}), {}, "y").ok());
}

TEST(ValueCompareTest, FloatOutsideToleranceNamesFirstElement) {
  absl::Status s = CompareValues(Floats({1.0f, 2.0f, 3.0f}), Floats({1.0f, 2.5f, 4.0f}), {}, "output 0 'y'");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "output 0 'y': element [1] expected 2, got 2.5 (2 of 3 elements differ)");
}

TEST(ValueCompareTest, RelativeToleranceUsesExpected) {
  // |0 - 1| = 1 > 1e-7 + 1e-3 * 0: expected 0, actual 1 differs.
  EXPECT_FALSE(CompareValues(Floats({0.0f}), Floats({1e-3f}), {}, "y").ok());
  EXPECT_TRUE(CompareValues(Floats({1000.0f}), Floats({1000.9f}), {}, "y").ok());
}

TEST(ValueCompareTest, NanEqualsNanAndInfinitiesMustMatch) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(CompareValues(Floats({nan, inf, -inf}), Floats({nan, inf, -inf}), {}, "y").ok());
  EXPECT_FALSE(CompareValues(Floats({nan}), Floats({0.0f}), {}, "y").ok());
  EXPECT_FALSE(CompareValues(Floats({inf}), Floats({-inf}), {}, "y").ok());
  EXPECT_FALSE(CompareValues(Floats({1.0f}), Floats({inf}), {}, "y").ok());
}

TEST(ValueCompareTest, HalfAndBFloat16AreConverted) {
  // 0x3C00 = 1.0 and 0x3C02 = 1.001953125 in IEEE half: outside rtol 1e-3.
  Tensor one = Make<uint16_t>(DataType::kFloat16, {1}, {0x3C00});
  Tensor next = Make<uint16_t>(DataType::kFloat16, {1}, {0x3C02});
  absl::Status s = CompareValues(one, next, {}, "y");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "y: element [0] expected 1, got 1.00195312 (1 of 1 elements differ)");
  // 0x3F80 = 1.0 and 0x4000 = 2.0 in bfloat16.
  Tensor b1 = Make<uint16_t>(DataType::kBFloat16, {1}, {0x3F80});
  Tensor b2 = Make<uint16_t>(DataType::kBFloat16, {1}, {0x4000});
  EXPECT_TRUE(CompareValues(b1, b1, {}, "y").ok());
  EXPECT_FALSE(CompareValues(b1, b2, {}, "y").ok());
}

TEST(ValueCompareTest, BFloat16AcceptsOneStepOfItsOwnPrecision) {
  // Around 3.0 (0x4040) bfloat16 steps by 2^-6 = 0.015625: 0x4041 = 3.015625 is
  // one step (rtol 1e-3 alone would refuse it), 0x4042 = 3.03125 two steps.
  Tensor three = Make<uint16_t>(DataType::kBFloat16, {1}, {0x4040});
  EXPECT_TRUE(CompareValues(three, Make<uint16_t>(DataType::kBFloat16, {1}, {0x4041}), {}, "y").ok());
  EXPECT_TRUE(CompareValues(three, Make<uint16_t>(DataType::kBFloat16, {1}, {0x403F}), {}, "y").ok());
  EXPECT_FALSE(CompareValues(three, Make<uint16_t>(DataType::kBFloat16, {1}, {0x4042}), {}, "y").ok());
  // Below a power of two the step halves: from 0x3FFF (1.9921875) to 2.0 is one step.
  EXPECT_TRUE(CompareValues(Make<uint16_t>(DataType::kBFloat16, {1}, {0x3FFF}),
                            Make<uint16_t>(DataType::kBFloat16, {1}, {0x4000}), {}, "y")
                  .ok());
  // float16 keeps rtol alone (see above); float keeps it too.
  EXPECT_FALSE(CompareValues(Floats({3.0f}), Floats({3.015625f}), {}, "y").ok());
}

TEST(ValueCompareTest, IntegersAreExact) {
  Tensor a = Make<int64_t>(DataType::kInt64, {2, 2}, {1, 2, 3, 4});
  Tensor b = Make<int64_t>(DataType::kInt64, {2, 2}, {1, 2, 3, 5});
  EXPECT_TRUE(CompareValues(a, a, {}, "y").ok());
  absl::Status s = CompareValues(a, b, {}, "y");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "y: element [1,1] expected 4, got 5 (1 of 4 elements differ)");
}

TEST(ValueCompareTest, BoolsAndStringsAreExact) {
  Tensor t = Make<uint8_t>(DataType::kBool, {2}, {1, 0});
  Tensor f = Make<uint8_t>(DataType::kBool, {2}, {1, 1});
  EXPECT_EQ(CompareValues(t, f, {}, "y").message(), "y: element [1] expected false, got true (1 of 2 elements differ)");
  Tensor s1 = Make<std::string>(DataType::kString, {1}, {"monday"});
  Tensor s2 = Make<std::string>(DataType::kString, {1}, {"Monday"});
  EXPECT_TRUE(CompareValues(s1, s1, {}, "y").ok());
  EXPECT_EQ(CompareValues(s1, s2, {}, "y").message(),
            "y: element [0] expected \"monday\", got \"Monday\" (1 of 1 elements differ)");
}

TEST(ValueCompareTest, TypeShapeAndKindMustMatch) {
  Tensor f = Floats({1.0f, 2.0f});
  Tensor d = Make<double>(DataType::kDouble, {2}, {1.0, 2.0});
  Tensor f23 = Make<float>(DataType::kFloat, {2, 1}, {1.0f, 2.0f});
  EXPECT_EQ(CompareValues(f, d, {}, "y").message(), "y: expected element type float, got double");
  EXPECT_EQ(CompareValues(f, f23, {}, "y").message(), "y: expected shape [2], got [2,1]");
  EXPECT_EQ(CompareValues(Value(f), Value(), {}, "y").message(), "y: expected a tensor, got an empty optional");
  EXPECT_TRUE(CompareValues(Value(), Value(), {}, "y").ok());
}

TEST(ValueCompareTest, SequencesCompareElementwise) {
  Value a = Value::Sequence(DataType::kFloat, {Floats({1.0f}), Floats({2.0f})});
  Value b = Value::Sequence(DataType::kFloat, {Floats({1.0f}), Floats({3.0f})});
  Value c = Value::Sequence(DataType::kFloat, {Floats({1.0f})});
  EXPECT_TRUE(CompareValues(a, a, {}, "y").ok());
  EXPECT_EQ(CompareValues(a, b, {}, "y").message(),
            "y sequence[1]: element [0] expected 2, got 3 (1 of 1 elements differ)");
  EXPECT_EQ(CompareValues(a, c, {}, "y").message(), "y: expected a sequence of 2 tensors, got 1");
}

}  // namespace
}  // namespace onyx::conformance
