// Element-wise unary math: Abs, Neg, Floor, Ceil, Round, Sqrt, Reciprocal, Exp,
// Log, the trigonometric and hyperbolic functions, Sign, Erf; and the
// predicates IsNaN, IsInf and Not with bool outputs.
#include <cmath>

#include "providers/cpu/math/math_kernels.h"
#include "providers/cpu/math/unary_kernel.h"
#include "providers/cpu/simd/vector_math.h"

namespace onyx {
namespace {

const std::vector<DataType> kSignedTypes = {DataType::kFloat,    DataType::kDouble, DataType::kFloat16,
                                            DataType::kBFloat16, DataType::kInt8,   DataType::kInt16,
                                            DataType::kInt32,    DataType::kInt64};

// Floating functions applied to integer inputs compute in double.
template <typename T, typename F>
inline T ViaFloat(T x, F f) {
  if constexpr (std::is_floating_point_v<T>) return f(x);
  else return static_cast<T>(f(static_cast<double>(x)));
}

ONYX_FLOAT_ELEMENTWISE(Floor, std::floor(x))
ONYX_FLOAT_ELEMENTWISE(Ceil, std::ceil(x))
ONYX_FLOAT_ELEMENTWISE(Round, std::nearbyint(x))  // half to even in the default rounding mode
ONYX_FLOAT_ELEMENTWISE(Sqrt, std::sqrt(x))
ONYX_FLOAT_ELEMENTWISE(Reciprocal, T(1) / x)
ONYX_FLOAT_ELEMENTWISE(Sin, std::sin(x))
ONYX_FLOAT_ELEMENTWISE(Cos, std::cos(x))
ONYX_FLOAT_ELEMENTWISE(Tan, std::tan(x))
ONYX_FLOAT_ELEMENTWISE(Asin, std::asin(x))
ONYX_FLOAT_ELEMENTWISE(Acos, std::acos(x))
ONYX_FLOAT_ELEMENTWISE(Atan, std::atan(x))
ONYX_FLOAT_ELEMENTWISE(Sinh, std::sinh(x))
ONYX_FLOAT_ELEMENTWISE(Cosh, std::cosh(x))
ONYX_FLOAT_ELEMENTWISE(Asinh, std::asinh(x))
ONYX_FLOAT_ELEMENTWISE(Acosh, std::acosh(x))
ONYX_FLOAT_ELEMENTWISE(Atanh, std::atanh(x))

// Exp and Log: float arrays through the vectorised math (1 and 2 ulp).
ONYX_VECTORIZED_UNARY(Exp, std::exp(x), simd::Exp)
ONYX_VECTORIZED_UNARY(Log, std::log(x), simd::Log)

struct Abs {
  using Types = NumericCompute;
  explicit Abs(const OpKernelInfo&) {}
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_unsigned_v<T>) return x;
    else return x < T(0) ? static_cast<T>(-x) : x;
  }
};

struct Neg {
  using Types = SignedCompute;
  explicit Neg(const OpKernelInfo&) {}
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      // Two's complement wrap for the minimum value instead of overflow UB.
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(U(0) - static_cast<U>(x));
    } else {
      return -x;
    }
  }
};

struct Sign {
  using Types = NumericCompute;
  explicit Sign(const OpKernelInfo&) {}
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x)) return x;
    }
    return x > T(0) ? T(1) : (x < T(0) ? static_cast<T>(-1) : T(0));
  }
};

struct Erf {
  using Types = NumericCompute;
  explicit Erf(const OpKernelInfo&) {}
  template <typename T>
  T operator()(T x) const {
    return ViaFloat(x, [](auto v) { return std::erf(v); });
  }
  static void MapFloats(const float* x, float* y, int64_t n) { simd::Erf(x, y, n); }  // 3 ulp
};

// Predicates: bool output of x's shape.
template <typename Op>
class Predicate final : public OpKernel {
 public:
  explicit Predicate(const OpKernelInfo& info) : op_(info) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), DataType::kBool));
    Tensor xf = UpcastToFloat(*x);
    bool* out = y->mutable_data<bool>();
    absl::Status s = DispatchList(typename Op::Types{}, xf.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = xf.data<T>();
      ParallelFor(xf.num_elements(), 16384, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = op_(in[i]);
      });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    return s;
  }

 private:
  Op op_;
};

struct IsNaN {
  using Types = FloatCompute;
  explicit IsNaN(const OpKernelInfo&) {}
  template <typename T>
  bool operator()(T x) const {
    return std::isnan(x);
  }
};

struct IsInf {
  using Types = FloatCompute;
  explicit IsInf(const OpKernelInfo& info)
      : negative(info.AttrOr<int64_t>("detect_negative", 1) != 0),
        positive(info.AttrOr<int64_t>("detect_positive", 1) != 0) {}
  template <typename T>
  bool operator()(T x) const {
    return std::isinf(x) && ((x > 0 && positive) || (x < 0 && negative));
  }
  bool negative;
  bool positive;
};

struct Not {
  using Types = TypeList<bool>;
  explicit Not(const OpKernelInfo&) {}
  bool operator()(bool x) const { return !x; }
};

}  // namespace

void RegisterUnaryKernels(KernelRegistry& r) {
  RegisterUnary<Abs>(r, "Abs", 1, kNumericTypes);
  RegisterUnary<Neg>(r, "Neg", 1, kSignedTypes);
  RegisterUnary<Floor>(r, "Floor", 1, kFloatTypes);
  RegisterUnary<Ceil>(r, "Ceil", 1, kFloatTypes);
  RegisterUnary<Round>(r, "Round", 11, kFloatTypes);
  RegisterUnary<Sqrt>(r, "Sqrt", 1, kFloatTypes);
  RegisterUnary<Reciprocal>(r, "Reciprocal", 1, kFloatTypes);
  RegisterUnary<Exp>(r, "Exp", 1, kFloatTypes);
  RegisterUnary<Log>(r, "Log", 1, kFloatTypes);
  RegisterUnary<Sin>(r, "Sin", 7, kFloatTypes);
  RegisterUnary<Cos>(r, "Cos", 7, kFloatTypes);
  RegisterUnary<Tan>(r, "Tan", 7, kFloatTypes);
  RegisterUnary<Asin>(r, "Asin", 7, kFloatTypes);
  RegisterUnary<Acos>(r, "Acos", 7, kFloatTypes);
  RegisterUnary<Atan>(r, "Atan", 7, kFloatTypes);
  RegisterUnary<Sinh>(r, "Sinh", 9, kFloatTypes);
  RegisterUnary<Cosh>(r, "Cosh", 9, kFloatTypes);
  RegisterUnary<Asinh>(r, "Asinh", 9, kFloatTypes);
  RegisterUnary<Acosh>(r, "Acosh", 9, kFloatTypes);
  RegisterUnary<Atanh>(r, "Atanh", 9, kFloatTypes);
  RegisterUnary<Sign>(r, "Sign", 9, kNumericTypes);
  RegisterUnary<Erf>(r, "Erf", 9, kNumericTypes);
  r.Register(KernelDefBuilder("IsNaN").Since(9).Types("T1", kFloatTypes).Build(), MakeFactory<Predicate<IsNaN>>());
  r.Register(KernelDefBuilder("IsInf").Since(10).Types("T1", kFloatTypes).Build(), MakeFactory<Predicate<IsInf>>());
  r.Register(KernelDefBuilder("Not").Since(1).Types("T", {DataType::kBool}).Build(), MakeFactory<Predicate<Not>>());
}

}  // namespace onyx
