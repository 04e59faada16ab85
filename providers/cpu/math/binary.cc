// Binary element-wise ops beyond the four arithmetic ones: Pow (base and
// exponent of different types), Mod (integer floor-mod or C fmod), BitShift.
#include <cmath>
#include <cstdint>

#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/math_kernels.h"

namespace onyx {
namespace {

bool IsIntegerType(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
    case DataType::kUint64: return true;
    default: return false;
  }
}

template <typename T>
T IntPow(T base, int64_t exp) {
  if (exp < 0) {
    if (base == T(1)) return T(1);
    if constexpr (std::is_signed_v<T>) {
      if (base == T(-1)) return (exp % 2 == 0) ? T(1) : T(-1);
    }
    return T(0);
  }
  // Modulo 2^64, then narrowed to T (which keeps the low bits): a result that
  // overflows T wraps, and the last squaring, whose value is never used, may
  // overflow freely — in T itself signed overflow is undefined, and narrow
  // types promote to int.
  uint64_t result = 1;
  uint64_t factor = static_cast<uint64_t>(base);
  while (exp > 0) {
    if (exp & 1) result *= factor;
    factor *= factor;
    exp >>= 1;
  }
  return static_cast<T>(result);
}

absl::StatusOr<Dims> OutputShape(const OpKernelContext& ctx, const Tensor& a, const Tensor& b) {
  auto shape = BroadcastShape(a.dims(), b.dims());
  if (!shape.ok()) return ctx.Error(shape.status().message());
  return shape;
}

class Pow final : public OpKernel {
 public:
  explicit Pow(const OpKernelInfo&) {}

  // x^1, x^2 and x^3 of float x by multiplication (x^2: the variance of a
  // decomposed LayerNorm; x^3: tanh-GELU's cube), a loop that vectorises
  // where std::pow is a call per element. x*x is the correctly rounded
  // square; x*x*x within 1 ulp. False for any other exponent.
  static bool SmallPower(const Tensor& x, const Tensor& e, Tensor& z) {
    double p;
    if (e.type() == DataType::kFloat) p = e.data<float>()[0];
    else if (e.type() == DataType::kDouble) p = e.data<double>()[0];
    else if (IsIntegerType(e.type())) p = static_cast<double>(ScalarAsInt64(e, 0));
    else return false;
    if (p != 1.0 && p != 2.0 && p != 3.0) return false;
    const float* px = x.data<float>();
    float* pz = z.mutable_data<float>();
    const int power = static_cast<int>(p);
    ParallelFor(x.num_elements(), 16384, [&](int64_t begin, int64_t end) {
      if (power == 1) {
        for (int64_t i = begin; i < end; ++i) pz[i] = px[i];
      } else if (power == 2) {
        for (int64_t i = begin; i < end; ++i) pz[i] = px[i] * px[i];
      } else {
        for (int64_t i = begin; i < end; ++i) pz[i] = px[i] * px[i] * px[i];
      }
    });
    return true;
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(const Tensor* e, RequireInput(ctx, 1, "Y"));
    ASSIGN_OR_RETURN(Dims dims, OutputShape(ctx, *x, *e));
    ASSIGN_OR_RETURN(Tensor* z, ctx.Output(0, dims, x->type()));
    if (x->type() == DataType::kFloat && e->num_elements() == 1 && dims == x->dims() && SmallPower(*x, *e, *z)) {
      return absl::OkStatus();
    }
    const bool int_exp = IsIntegerType(e->type());
    ASSIGN_OR_RETURN(Tensor exp, ConvertNumeric(*e, int_exp ? DataType::kInt64 : DataType::kDouble));
    Tensor xf = UpcastToFloat(*x);
    Tensor zf = IsHalfLike(x->type()) ? Tensor::Allocate(DataType::kFloat, dims) : *z;
    absl::Status s = DispatchList(NumericCompute{}, xf.type(), [&](auto tag) {
      using T = decltype(tag);
      if (int_exp) {
        BroadcastBinary<T, T, int64_t>(xf, exp, zf, [](T b, int64_t p) {
          if constexpr (std::is_integral_v<T>) return IntPow<T>(b, p);
          else return static_cast<T>(std::pow(static_cast<double>(b), static_cast<double>(p)));
        });
      } else {
        BroadcastBinary<T, T, double>(xf, exp, zf, [](T b, double p) {
          if constexpr (std::is_same_v<T, float>) return std::pow(b, static_cast<float>(p));
          else return static_cast<T>(std::pow(static_cast<double>(b), p));
        });
      }
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    if (IsHalfLike(x->type())) DowncastFromFloat(zf, *z);
    return absl::OkStatus();
  }
};

class Mod final : public OpKernel {
 public:
  explicit Mod(const OpKernelInfo& info) : fmod_(info.AttrOr<int64_t>("fmod", 0) != 0) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(BinaryOperands operands, SameTypeOperands(ctx, "A", "B"));
    const Tensor* a = operands.a;
    const Tensor* b = operands.b;
    const Dims& dims = operands.dims;
    ASSIGN_OR_RETURN(Tensor* c, ctx.Output(0, dims, a->type()));
    Tensor af = UpcastToFloat(*a), bf = UpcastToFloat(*b);
    Tensor cf = IsHalfLike(a->type()) ? Tensor::Allocate(DataType::kFloat, dims) : *c;
    const bool c_mod = fmod_;
    absl::Status s = DispatchList(NumericCompute{}, af.type(), [&](auto tag) {
      using T = decltype(tag);
      BroadcastBinary<T, T>(af, bf, cf, [c_mod](T x, T y) -> T {
        if constexpr (std::is_floating_point_v<T>) {
          T r = std::fmod(x, y);
          if (!c_mod && r != T(0) && ((r < T(0)) != (y < T(0)))) r += y;
          return r;
        } else {
          if (y == T(0)) return T(0);  // undefined in ONNX; never trap
          if constexpr (std::is_signed_v<T>) {
            if (y == T(-1)) return T(0);  // avoids the INT_MIN % -1 trap
          }
          T r = static_cast<T>(x % y);
          if constexpr (std::is_signed_v<T>) {
            if (!c_mod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
          }
          return r;
        }
      });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    if (IsHalfLike(a->type())) DowncastFromFloat(cf, *c);
    return absl::OkStatus();
  }

 private:
  bool fmod_;
};

class BitShift final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(std::string direction, info.Attr<std::string>("direction"));
    if (direction != "LEFT" && direction != "RIGHT") {
      return info.Error(absl::StrCat("attribute 'direction' must be LEFT or RIGHT, received '", direction, "'"));
    }
    return std::unique_ptr<OpKernel>(new BitShift(direction == "LEFT"));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(BinaryOperands operands, SameTypeOperands(ctx, "X", "Y"));
    const Tensor* x = operands.a;
    const Tensor* y = operands.b;
    const Dims& dims = operands.dims;
    ASSIGN_OR_RETURN(Tensor* z, ctx.Output(0, dims, x->type()));
    const bool left = left_;
    absl::Status s = DispatchTypes<uint8_t, uint16_t, uint32_t, uint64_t>(x->type(), [&](auto tag) {
      using T = decltype(tag);
      constexpr T kBits = static_cast<T>(sizeof(T) * 8);
      BroadcastBinary<T, T>(*x, *y, *z, [left](T v, T n) -> T {
        if (n >= kBits) return T(0);
        return left ? static_cast<T>(v << n) : static_cast<T>(v >> n);
      });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    return s;
  }

 private:
  explicit BitShift(bool left) : left_(left) {}
  bool left_;
};

}  // namespace

void RegisterBinaryKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Pow").Since(7).Build(), MakeFactory<Pow>());
  r.Register(KernelDefBuilder("Mod").Since(10).Types("T", kNumericTypes).Build(), MakeFactory<Mod>());
  r.Register(KernelDefBuilder("BitShift")
                 .Since(11)
                 .Types("T", {DataType::kUint8, DataType::kUint16, DataType::kUint32, DataType::kUint64})
                 .Build(),
             MakeFactory<BitShift>());
}

}  // namespace onyx
