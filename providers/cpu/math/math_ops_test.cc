// Math-family kernels run through a session on cases the ONNX node tests do
// not cover: attribute forms of old opsets, integer edge cases, NaN handling,
// float16, implicit einsum, and error reporting. Expected values are worked
// out by hand in the comments.
#include <cmath>
#include <cstdio>
#include <limits>

#include <optional>

#include "gtest/gtest.h"
#include "providers/cpu/op_test_util.h"

namespace onyx {
namespace {

using testing::FloatAttr;
using testing::FloatTensor;
using testing::Int64Tensor;
using testing::IntAttr;
using testing::ModelBuilder;
using testing::RunModel;
using testing::StringAttr;
using testing::TypedTensor;
using testing::Values;

TEST(MathOpsTest, ClipUsesAttributesBeforeOpset11) {
  ModelBuilder m(6);
  m.Input("x", DataType::kFloat, {3}).Output("y", DataType::kFloat, {3});
  auto& n = m.Node("Clip", {"x"}, {"y"});
  *n.add_attribute() = FloatAttr("min", -1.f);
  *n.add_attribute() = FloatAttr("max", 2.f);
  auto out = RunModel(m, {{"x", Value(FloatTensor({3}, {-3.f, 0.5f, 5.f}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({-1.f, 0.5f, 2.f}));
}

// Before opset 7, arithmetic broadcast only with broadcast = 1, B aligned with
// A's dims from `axis` on (numpy would align [3] with the last dim instead).
TEST(MathOpsTest, ArithmeticBeforeOpset7AlignsBAtAxis) {
  auto run = [](const std::vector<int64_t>& a_dims, const std::vector<float>& a, const std::vector<int64_t>& b_dims,
                const std::vector<float>& b, std::optional<int64_t> axis) {
    ModelBuilder m(6);
    m.Input("a", DataType::kFloat, a_dims).Input("b", DataType::kFloat, b_dims).Output("y", DataType::kFloat, a_dims);
    onnx::NodeProto& node = m.Node("Mul", {"a", "b"}, {"y"});
    *node.add_attribute() = IntAttr("broadcast", 1);
    if (axis) *node.add_attribute() = IntAttr("axis", *axis);
    return RunModel(m, {{"a", Value(FloatTensor(a_dims, a))}, {"b", Value(FloatTensor(b_dims, b))}}, {"y"});
  };
  // B [3] at axis 1 of A [1, 3, 2, 2]: one factor per channel.
  auto channel = run({1, 3, 2, 2}, {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, {3}, {10, 100, 1000}, 1);
  ASSERT_TRUE(channel.ok()) << channel.status();
  EXPECT_EQ(Values<float>((*channel)[0]),
            (std::vector<float>{10, 10, 10, 10, 200, 200, 200, 200, 3000, 3000, 3000, 3000}));
  // Without axis, B lines up with A's trailing dims.
  auto trailing = run({2, 2}, {1, 2, 3, 4}, {2}, {10, 100}, std::nullopt);
  ASSERT_TRUE(trailing.ok()) << trailing.status();
  EXPECT_EQ(Values<float>((*trailing)[0]), (std::vector<float>{10, 200, 30, 400}));
  // B that does not fit at the axis is refused, naming both shapes.
  auto refused = run({1, 3, 2, 2}, std::vector<float>(12, 1.f), {2}, {1, 1}, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("B [2] at axis 1 does not match A [1,3,2,2]"), std::string::npos)
      << refused.status();
}

TEST(MathOpsTest, ClipIntegerWithBoundInputs) {
  ModelBuilder m(13);
  m.Input("x", DataType::kInt32, {3}).Input("lo", DataType::kInt32, {}).Input("hi", DataType::kInt32, {});
  m.Output("y", DataType::kInt32, {3});
  m.Node("Clip", {"x", "lo", "hi"}, {"y"});
  auto out = RunModel(m,
                      {{"x", Value(TypedTensor<int32_t>(DataType::kInt32, {3}, {-5, 3, 9}))},
                       {"lo", Value(TypedTensor<int32_t>(DataType::kInt32, {}, {0}))},
                       {"hi", Value(TypedTensor<int32_t>(DataType::kInt32, {}, {4}))}},
                      {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0]), std::vector<int32_t>({0, 3, 4}));
}

TEST(MathOpsTest, SoftmaxCoercesTo2dBeforeOpset13) {
  // Opset 11, axis 1 on [1, 2, 2]: one row of 4 values {0, 0, 0, ln 3}:
  // exp = {1, 1, 1, 3}, sum 6.
  ModelBuilder m(11);
  m.Input("x", DataType::kFloat, {1, 2, 2}).Output("y", DataType::kFloat, {1, 2, 2});
  m.Node("Softmax", {"x"}, {"y"});
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 2, 2}, {0.f, 0.f, 0.f, std::log(3.f)}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<float> y = Values<float>((*out)[0]);
  const std::vector<float> expected = {1.f / 6, 1.f / 6, 1.f / 6, 0.5f};
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], expected[i], 1e-6) << i;
}

TEST(MathOpsTest, ReduceLogSumExpIsStableForLargeValues) {
  // log(e^1000 + e^1000) = 1000 + ln 2.
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {1});
  m.Node("ReduceLogSumExp", {"x"}, {"y"});
  auto out = RunModel(m, {{"x", Value(FloatTensor({2}, {1000.f, 1000.f}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NEAR(Values<float>((*out)[0])[0], 1000.f + std::log(2.f), 1e-3);
}

TEST(MathOpsTest, ReduceMaxOverNonAdjacentAxes) {
  // x[i][j][k] = 4i + 2j + k; max over axes {0, 2} keeps j: {5, 7}.
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 2, 2}).Output("y", DataType::kFloat, {2});
  auto& n = m.Node("ReduceMax", {"x"}, {"y"});
  *n.add_attribute() = testing::IntsAttr("axes", {0, -1});
  *n.add_attribute() = IntAttr("keepdims", 0);
  auto out = RunModel(m, {{"x", Value(FloatTensor({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({5.f, 7.f}));
}

TEST(MathOpsTest, Opset18ReductionsTakeAxesFromAnInput) {
  // x = [[1, 2], [3, 4]]: mean over axis 1 = {1.5, 3.5}; max over no axes with
  // noop_with_empty_axes returns x; ReduceMax-20 reduces bool (any).
  ModelBuilder m(20);
  m.Input("x", DataType::kFloat, {2, 2}).Input("b", DataType::kBool, {2, 2});
  m.Output("mean", DataType::kFloat, {2}).Output("same", DataType::kFloat, {2, 2}).Output("any", DataType::kBool, {2});
  m.Initializer("axis1", TypedTensor<int64_t>(DataType::kInt64, {1}, {1}));
  m.Initializer("none", TypedTensor<int64_t>(DataType::kInt64, {0}, {}));
  *m.Node("ReduceMean", {"x", "axis1"}, {"mean"}).add_attribute() = IntAttr("keepdims", 0);
  *m.Node("ReduceMax", {"x", "none"}, {"same"}).add_attribute() = IntAttr("noop_with_empty_axes", 1);
  *m.Node("ReduceMax", {"b", "axis1"}, {"any"}).add_attribute() = IntAttr("keepdims", 0);
  Tensor b = TypedTensor<bool>(DataType::kBool, {2, 2}, {false, true, false, false});
  auto out = RunModel(m, {{"x", Value(FloatTensor({2, 2}, {1, 2, 3, 4}))}, {"b", Value(b)}}, {"mean", "same", "any"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({1.5f, 3.5f}));
  EXPECT_EQ(Values<float>((*out)[1]), std::vector<float>({1, 2, 3, 4}));
  EXPECT_EQ(Values<bool>((*out)[2]), std::vector<bool>({true, false}));
}

TEST(MathOpsTest, Opset18ReductionRefusesTheRetiredAxesAttribute) {
  ModelBuilder m(18);
  m.Input("x", DataType::kFloat, {2, 2}).Output("y", DataType::kFloat, {2, 1});
  *m.Node("ReduceMean", {"x"}, {"y"}).add_attribute() = testing::IntsAttr("axes", {1});
  auto out = RunModel(m, {{"x", Value(FloatTensor({2, 2}, {1, 2, 3, 4}))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("Unrecognized attribute: axes for operator ReduceMean"), std::string::npos)
      << out.status();
}

TEST(MathOpsTest, ReduceRepeatedAxisIsInvalidArgument) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {2, 2}).Output("y", DataType::kFloat, {-1, -1});
  *m.Node("ReduceMean", {"x"}, {"y"}).add_attribute() = testing::IntsAttr("axes", {1, -1});
  auto out = RunModel(m, {{"x", Value(FloatTensor({2, 2}, {1, 2, 3, 4}))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("repeated"), std::string::npos) << out.status();
}

TEST(MathOpsTest, IntegerModAndDivNeverTrap) {
  // Python-style mod: -7 % 2 = 1, 7 % -2 = -1, INT_MIN % -1 = 0; division by 0
  // yields 0 and INT_MIN / -1 wraps to INT_MIN.
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  ModelBuilder m(13);
  m.Input("a", DataType::kInt32, {4}).Input("b", DataType::kInt32, {4});
  m.Output("mod", DataType::kInt32, {4}).Output("div", DataType::kInt32, {4});
  m.Node("Mod", {"a", "b"}, {"mod"});
  m.Node("Div", {"a", "b"}, {"div"});
  auto out = RunModel(m,
                      {{"a", Value(TypedTensor<int32_t>(DataType::kInt32, {4}, {-7, 7, kMin, 5}))},
                       {"b", Value(TypedTensor<int32_t>(DataType::kInt32, {4}, {2, -2, -1, 0}))}},
                      {"mod", "div"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0]), std::vector<int32_t>({1, -1, 0, 0}));
  EXPECT_EQ(Values<int32_t>((*out)[1]), std::vector<int32_t>({-3, -3, kMin, 0}));
}

TEST(MathOpsTest, PowIntegerBaseAndExponentIsExact) {
  // 3^39 does not fit a double's mantissa exactly: 4052555153018976267.
  ModelBuilder m(15);
  m.Input("x", DataType::kInt64, {3}).Input("p", DataType::kInt64, {3}).Output("y", DataType::kInt64, {3});
  m.Node("Pow", {"x", "p"}, {"y"});
  auto out =
      RunModel(m, {{"x", Value(Int64Tensor({3}, {2, -2, 3}))}, {"p", Value(Int64Tensor({3}, {10, 3, 39}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), std::vector<int64_t>({1024, -8, 4052555153018976267LL}));
}

// Results past int64 wrap modulo 2^64 (numpy's int64 power gives the same):
// 3^41 -> -420491770248316829, (-5)^29 -> -1797074186000186965. Undefined
// signed overflow before, which UBSan reported.
TEST(MathOpsTest, PowIntegerOverflowWraps) {
  ModelBuilder m(15);
  m.Input("x", DataType::kInt64, {2}).Input("p", DataType::kInt64, {2}).Output("y", DataType::kInt64, {2});
  m.Node("Pow", {"x", "p"}, {"y"});
  auto out = RunModel(m, {{"x", Value(Int64Tensor({2}, {3, -5}))}, {"p", Value(Int64Tensor({2}, {41, 29}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), std::vector<int64_t>({-420491770248316829LL, -1797074186000186965LL}));
}

// Float x to the powers 1, 2 and 3 (multiplied out) and 2.5 (std::pow), with
// the exponent as float, int64 and double: equal to std::pow's values,
// specials included.
TEST(MathOpsTest, PowSmallIntegerExponentsMatchStdPow) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {-3.f, -0.5f, 0.f, 1.5f, 7.f, inf, -inf, 1e20f};
  const struct {
    DataType type;
    double p;
  } exponents[] = {{DataType::kFloat, 2}, {DataType::kInt64, 3}, {DataType::kDouble, 1}, {DataType::kFloat, 2.5}};
  for (const auto& e : exponents) {
    ModelBuilder m(15);
    m.Input("x", DataType::kFloat, {8}).Input("p", e.type, {}).Output("y", DataType::kFloat, {8});
    m.Node("Pow", {"x", "p"}, {"y"});
    Tensor p = Tensor::Allocate(e.type, {});
    if (e.type == DataType::kFloat) p.mutable_data<float>()[0] = static_cast<float>(e.p);
    if (e.type == DataType::kDouble) p.mutable_data<double>()[0] = e.p;
    if (e.type == DataType::kInt64) p.mutable_data<int64_t>()[0] = static_cast<int64_t>(e.p);
    auto out = RunModel(m, {{"x", Value(FloatTensor({8}, x))}, {"p", Value(p)}}, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<float> y = Values<float>((*out)[0]);
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = std::pow(x[i], static_cast<float>(e.p));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y[i])) << x[i] << "^" << e.p;
      } else {
        EXPECT_EQ(y[i], want) << x[i] << "^" << e.p;
      }
    }
  }
}

TEST(MathOpsTest, MaxPropagatesNaN) {
  ModelBuilder m(13);
  m.Input("a", DataType::kFloat, {2}).Input("b", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
  m.Node("Max", {"a", "b"}, {"y"});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out =
      RunModel(m, {{"a", Value(FloatTensor({2}, {nan, 1.f}))}, {"b", Value(FloatTensor({2}, {0.f, nan}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isnan(Values<float>((*out)[0])[0]));
  EXPECT_TRUE(std::isnan(Values<float>((*out)[0])[1]));
}

TEST(MathOpsTest, Float16ComputesThroughFloat) {
  // |-1.5| = 1.5 and 2.25 + 1.5 = 3.75 are exact in float16.
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat16, {2}).Output("y", DataType::kFloat16, {2});
  m.Input("z", DataType::kFloat16, {2});
  m.Node("Abs", {"x"}, {"a"});
  m.Node("Sum", {"a", "z"}, {"y"});
  auto half = [](std::vector<float> v) {
    std::vector<uint16_t> bits;
    for (float f : v) bits.push_back(FloatToHalf(f));
    return TypedTensor<uint16_t>(DataType::kFloat16, {static_cast<int64_t>(v.size())}, bits);
  };
  auto out = RunModel(m, {{"x", Value(half({-1.5f, 2.25f}))}, {"z", Value(half({2.25f, 1.5f}))}}, {"y"});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<uint16_t> y = Values<uint16_t>((*out)[0]);
  EXPECT_EQ(HalfToFloat(y[0]), 3.75f);
  EXPECT_EQ(HalfToFloat(y[1]), 3.75f);
}

TEST(MathOpsTest, EinsumImplicitOutputTraceAndMatmul) {
  // "ii" is the trace (1 + 4); "ij,jk" implies "ik".
  ModelBuilder m(12);
  m.Input("a", DataType::kFloat, {2, 2}).Output("t", DataType::kFloat, {}).Output("p", DataType::kFloat, {2, 2});
  *m.Node("Einsum", {"a"}, {"t"}).add_attribute() = StringAttr("equation", "ii");
  *m.Node("Einsum", {"a", "a"}, {"p"}).add_attribute() = StringAttr("equation", "ij,jk");
  auto out = RunModel(m, {{"a", Value(FloatTensor({2, 2}, {1, 2, 3, 4}))}}, {"t", "p"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0]), std::vector<float>({5.f}));
  EXPECT_EQ(Values<float>((*out)[1]), std::vector<float>({7.f, 10.f, 15.f, 22.f}));
}

TEST(MathOpsTest, EinsumWrongTermCountIsInvalidArgument) {
  ModelBuilder m(12);
  m.Input("a", DataType::kFloat, {2, 2}).Output("y", DataType::kFloat, {2});
  *m.Node("Einsum", {"a"}, {"y"}).add_attribute() = StringAttr("equation", "ij,jk->ik");
  auto out = RunModel(m, {{"a", Value(FloatTensor({2, 2}, {1, 2, 3, 4}))}}, {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
}

TEST(MathOpsTest, ArgMaxBreaksTiesByAttribute) {
  ModelBuilder m(13);
  m.Input("x", DataType::kFloat, {1, 3})
      .Output("first", DataType::kInt64, {1, 1})
      .Output("last", DataType::kInt64, {1, 1});
  *m.Node("ArgMax", {"x"}, {"first"}).add_attribute() = IntAttr("axis", 1);
  auto& n = m.Node("ArgMax", {"x"}, {"last"});
  *n.add_attribute() = IntAttr("axis", 1);
  *n.add_attribute() = IntAttr("select_last_index", 1);
  auto out = RunModel(m, {{"x", Value(FloatTensor({1, 3}, {1, 3, 3}))}}, {"first", "last"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0]), std::vector<int64_t>({1}));
  EXPECT_EQ(Values<int64_t>((*out)[1]), std::vector<int64_t>({2}));
}

TEST(MathOpsTest, MatMulShapeMismatchNamesBothShapes) {
  ModelBuilder m(13);
  m.Input("a", DataType::kFloat, {2, 3}).Input("b", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {-1, -1});
  m.Node("MatMul", {"a", "b"}, {"y"});
  auto out = RunModel(
      m, {{"a", Value(FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6}))}, {"b", Value(FloatTensor({2, 3}, {1, 2, 3, 4, 5, 6}))}},
      {"y"});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("[2,3] x [2,3]"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

// DynamicQuantizeLinear over 100 000 values (several parallel blocks) with
// the range [-2.55, 7.65]: scale 0.04, zero point 64. Values placed exactly
// on half steps round to even; the result is checked against the formula
// worked here in double.
TEST(MathOpsTest, DynamicQuantizeLinearRoundsHalfToEvenAcrossBlocks) {
  testing::ModelBuilder m(11);
  const int64_t n = 100000;
  m.Input("x", DataType::kFloat, {n}).Output("y", DataType::kUint8, {n});
  m.Output("scale", DataType::kFloat, {}).Output("zp", DataType::kUint8, {});
  m.Node("DynamicQuantizeLinear", {"x"}, {"y", "scale", "zp"});
  Tensor x = Tensor::Allocate(DataType::kFloat, {n});
  float* px = x.mutable_data<float>();
  for (int64_t i = 0; i < n; ++i) px[i] = static_cast<float>((i * 7919) % 1021) / 100.f - 2.55f;
  px[0] = -2.55f;
  px[1] = 7.65f;
  auto out = testing::RunModel(m, {{"x", Value(x)}}, {"y", "scale", "zp"});
  ASSERT_TRUE(out.ok()) << out.status();
  const float scale = testing::Values<float>((*out)[1])[0];
  const int zp = testing::Values<uint8_t>((*out)[2])[0];
  EXPECT_NEAR(scale, 10.2 / 255, 1e-7);
  EXPECT_EQ(zp, 64);
  const std::vector<uint8_t> y = testing::Values<uint8_t>((*out)[0]);
  int64_t wrong = 0, ties = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float v = px[i] / scale;  // the division ONNX specifies, in float
    const double fl = std::floor(v);
    double r = v - fl < 0.5 ? fl : v - fl > 0.5 ? fl + 1 : (std::fmod(fl, 2.0) == 0 ? fl : fl + 1);
    ties += v - fl == 0.5;
    const int want = static_cast<int>(std::min(255.0, std::max(0.0, r + zp)));
    wrong += y[i] != want;
  }
  EXPECT_EQ(wrong, 0);
  std::printf("DynamicQuantizeLinear: %lld exact half steps among %lld values\n", static_cast<long long>(ties),
              static_cast<long long>(n));
}

}  // namespace
}  // namespace onyx
