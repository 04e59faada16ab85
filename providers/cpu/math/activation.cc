// Activations: Relu, LeakyRelu, Elu, Selu, Celu, Sigmoid, HardSigmoid,
// HardSwish, Softplus, Softsign, Tanh, ThresholdedRelu, Mish, Shrink, plus Clip
// (attribute bounds before opset 11, optional inputs from 11) and PRelu (slope
// broadcast unidirectionally to X).
#include <cmath>
#include <limits>

#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/math/math_kernels.h"
#include "providers/cpu/math/unary_kernel.h"
#include "providers/cpu/simd/vector_math.h"

namespace onyx {
namespace {

const std::vector<DataType> kSignedTypes = {DataType::kFloat,    DataType::kDouble, DataType::kFloat16,
                                            DataType::kBFloat16, DataType::kInt8,   DataType::kInt16,
                                            DataType::kInt32,    DataType::kInt64};

struct Relu {
  using Types = SignedCompute;
  explicit Relu(const OpKernelInfo&) {}
  template <typename T>
  T operator()(T x) const {
    return x > T(0) ? x : T(0);
  }
};

// Activations with one float attribute `alpha`.
#define ONYX_ALPHA_ACTIVATION(Name, default_alpha, expr)                                           \
  struct Name {                                                                                    \
    using Types = FloatCompute;                                                                    \
    explicit Name(const OpKernelInfo& info) : alpha(info.AttrOr<float>("alpha", default_alpha)) {} \
    template <typename T>                                                                          \
    T operator()(T x) const {                                                                      \
      const T a = static_cast<T>(alpha);                                                           \
      return expr;                                                                                 \
    }                                                                                              \
    float alpha;                                                                                   \
  };

ONYX_ALPHA_ACTIVATION(LeakyRelu, 0.01f, x < T(0) ? a * x : x)
ONYX_ALPHA_ACTIVATION(Elu, 1.0f, x < T(0) ? a * (std::exp(x) - T(1)) : x)
ONYX_ALPHA_ACTIVATION(Celu, 1.0f, std::max(T(0), x) + std::min(T(0), a*(std::exp(x / a) - T(1))))
ONYX_ALPHA_ACTIVATION(ThresholdedRelu, 1.0f, x > a ? x : T(0))
#undef ONYX_ALPHA_ACTIVATION

ONYX_FLOAT_ELEMENTWISE(Softsign, x / (T(1) + std::abs(x)))
ONYX_FLOAT_ELEMENTWISE(HardSwish, x* std::max(T(0), std::min(T(1), x / T(6) + T(0.5))))

ONYX_VECTORIZED_UNARY(Tanh, std::tanh(x), simd::Tanh)  // 3 ulp

template <typename T>
inline T StableSoftplus(T x) {
  return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

struct Softplus {
  using Types = FloatCompute;
  explicit Softplus(const OpKernelInfo&) {}
  template <typename T>
  T operator()(T x) const {
    return StableSoftplus(x);
  }
};

struct Mish {
  using Types = FloatCompute;
  explicit Mish(const OpKernelInfo&) {}
  template <typename T>
  T operator()(T x) const {
    return x * std::tanh(StableSoftplus(x));
  }
};

struct Sigmoid {
  using Types = FloatCompute;
  explicit Sigmoid(const OpKernelInfo&) {}
  template <typename T>
  T operator()(T x) const {
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    const T e = std::exp(x);
    return e / (T(1) + e);
  }
  static void MapFloats(const float* x, float* y, int64_t n) { simd::Sigmoid(x, y, n); }  // 3 ulp
};

struct Selu {
  using Types = FloatCompute;
  explicit Selu(const OpKernelInfo& info)
      : alpha(info.AttrOr<float>("alpha", 1.67326319217681884765625f)),
        gamma(info.AttrOr<float>("gamma", 1.05070102214813232421875f)) {}
  template <typename T>
  T operator()(T x) const {
    return x > T(0) ? T(gamma) * x : T(gamma) * (T(alpha) * std::exp(x) - T(alpha));
  }
  float alpha;
  float gamma;
};

struct HardSigmoid {
  using Types = FloatCompute;
  explicit HardSigmoid(const OpKernelInfo& info)
      : alpha(info.AttrOr<float>("alpha", 0.2f)), beta(info.AttrOr<float>("beta", 0.5f)) {}
  template <typename T>
  T operator()(T x) const {
    return std::max(T(0), std::min(T(1), T(alpha) * x + T(beta)));
  }
  float alpha;
  float beta;
};

struct Shrink {
  using Types = NumericCompute;
  explicit Shrink(const OpKernelInfo& info)
      : bias(info.AttrOr<float>("bias", 0.f)), lambd(info.AttrOr<float>("lambd", 0.5f)) {}
  template <typename T>
  T operator()(T x) const {
    const double v = static_cast<double>(x);
    if (v < -lambd) return static_cast<T>(v + bias);
    if (v > lambd) return static_cast<T>(v - bias);
    return T(0);
  }
  float bias;
  float lambd;
};

class Clip final : public OpKernel {
 public:
  explicit Clip(const OpKernelInfo& info)
      : attr_form_(info.node().since_version != 0 && info.node().since_version < 11),
        attr_min_(info.AttrOr<float>("min", std::numeric_limits<float>::lowest())),
        attr_max_(info.AttrOr<float>("max", std::numeric_limits<float>::max())) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "input"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), x->type()));
    const Tensor* lo = attr_form_ ? nullptr : ctx.Input(1);
    const Tensor* hi = attr_form_ ? nullptr : ctx.Input(2);
    for (const Tensor* b : {lo, hi}) {
      if (b == nullptr) continue;
      if (b->num_elements() != 1) {
        return ctx.Error(absl::StrCat("min and max must be scalars, received shape ", DimsToString(b->dims())));
      }
      if (b->type() != x->type()) {
        return ctx.Error(absl::StrCat("min/max type ", DataTypeName(b->type()), " differs from input type ",
                                      DataTypeName(x->type())));
      }
    }
    Tensor xf = UpcastToFloat(*x);
    Tensor yf = IsHalfLike(x->type()) ? Tensor::Allocate(DataType::kFloat, x->dims()) : *y;
    absl::Status s = DispatchList(NumericCompute{}, xf.type(), [&](auto tag) {
      using T = decltype(tag);
      T low = std::numeric_limits<T>::lowest(), high = std::numeric_limits<T>::max();
      if (attr_form_) {
        low = static_cast<T>(attr_min_);
        high = static_cast<T>(attr_max_);
      }
      if (lo != nullptr) low = UpcastToFloat(*lo).data<T>()[0];
      if (hi != nullptr) high = UpcastToFloat(*hi).data<T>()[0];
      MapElements(xf.data<T>(), yf.mutable_data<T>(), xf.num_elements(),
                  [low, high](T v) { return std::min(std::max(v, low), high); });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    if (IsHalfLike(x->type())) DowncastFromFloat(yf, *y);
    return absl::OkStatus();
  }

 private:
  bool attr_form_;
  float attr_min_;
  float attr_max_;
};

class PRelu final : public OpKernel {
 public:
  explicit PRelu(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* slope, RequireInput(ctx, 1, "slope"));
    if (slope->type() != x->type()) {
      return ctx.Error(
          absl::StrCat("slope type ", DataTypeName(slope->type()), " differs from X type ", DataTypeName(x->type())));
    }
    auto shape = BroadcastShape(x->dims(), slope->dims());
    if (!shape.ok() || *shape != x->dims()) {
      return ctx.Error(absl::StrCat("slope of shape ", DimsToString(slope->dims()), " cannot broadcast to X of shape ",
                                    DimsToString(x->dims())));
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), x->type()));
    Tensor xf = UpcastToFloat(*x), sf = UpcastToFloat(*slope);
    Tensor yf = IsHalfLike(x->type()) ? Tensor::Allocate(DataType::kFloat, x->dims()) : *y;
    absl::Status s = DispatchList(NumericCompute{}, xf.type(), [&](auto tag) {
      using T = decltype(tag);
      BroadcastBinary<T, T>(xf, sf, yf, [](T v, T a) { return v < T(0) ? static_cast<T>(a * v) : v; });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    if (IsHalfLike(x->type())) DowncastFromFloat(yf, *y);
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterActivationKernels(KernelRegistry& r) {
  RegisterUnary<Relu>(r, "Relu", 1, kSignedTypes);
  RegisterUnary<LeakyRelu>(r, "LeakyRelu", 1, kFloatTypes);
  RegisterUnary<Elu>(r, "Elu", 1, kFloatTypes);
  RegisterUnary<Selu>(r, "Selu", 1, kFloatTypes);
  RegisterUnary<Celu>(r, "Celu", 12, kFloatTypes);
  RegisterUnary<Sigmoid>(r, "Sigmoid", 1, kFloatTypes);
  RegisterUnary<HardSigmoid>(r, "HardSigmoid", 1, kFloatTypes);
  RegisterUnary<HardSwish>(r, "HardSwish", 14, kFloatTypes);
  RegisterUnary<Softplus>(r, "Softplus", 1, kFloatTypes);
  RegisterUnary<Softsign>(r, "Softsign", 1, kFloatTypes);
  RegisterUnary<Tanh>(r, "Tanh", 1, kFloatTypes);
  RegisterUnary<ThresholdedRelu>(r, "ThresholdedRelu", 10, kFloatTypes);
  RegisterUnary<Mish>(r, "Mish", 18, kFloatTypes);
  RegisterUnary<Shrink>(r, "Shrink", 9, kNumericTypes);
  r.Register(KernelDefBuilder("Clip").Since(1).Types("T", kNumericTypes).MayInplace(0, 0).Build(), MakeFactory<Clip>());
  r.Register(KernelDefBuilder("PRelu").Since(1).Types("T", kNumericTypes).Build(), MakeFactory<PRelu>());
}

}  // namespace onyx
