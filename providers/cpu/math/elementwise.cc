// Element-wise arithmetic (Add, Sub, Mul, Div) with numpy broadcasting.
// float16/bfloat16 compute in float.
#include <cmath>
#include <cstdint>

#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/math_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

enum class Arith { kAdd, kSub, kMul, kDiv };

constexpr int64_t kNoAxis = INT64_MIN;

template <Arith op, typename T>
inline T Apply(T a, T b) {
  if constexpr (op == Arith::kAdd) return a + b;
  if constexpr (op == Arith::kSub) return a - b;
  if constexpr (op == Arith::kMul) return a * b;
  if constexpr (op == Arith::kDiv) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return T(0);  // undefined in ONNX; never trap
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(a));
      }
      return static_cast<T>(a / b);
    }
    return a / b;
  }
}

// Before opset 7, B broadcast only when `broadcast` = 1, aligned with A's
// dims from `axis` on (default: A's trailing dims): B [C] against A [N, C, H, W]
// with axis = 1 means B [1, C, 1, 1]. Returns B viewed with A's rank so that
// numpy broadcasting gives that result.
absl::StatusOr<Tensor> AlignLegacyOperand(const OpKernelContext& ctx, const Tensor& a, const Tensor& b,
                                          int64_t axis_attr) {
  if (b.rank() > a.rank()) {
    return ctx.Error(absl::StrCat("with broadcast = 1, B ", DimsToString(b.dims()), " may not have more dims than A ",
                                  DimsToString(a.dims())));
  }
  const int64_t axis = axis_attr == kNoAxis ? a.rank() - b.rank() : (axis_attr < 0 ? axis_attr + a.rank() : axis_attr);
  if (axis < 0 || axis + b.rank() > a.rank()) {
    return ctx.Error(absl::StrCat("attribute 'axis' ", axis_attr, " does not place B ", DimsToString(b.dims()),
                                  " inside A ", DimsToString(a.dims())));
  }
  std::vector<int64_t> dims(a.rank(), 1);
  for (int64_t i = 0; i < b.rank(); ++i) {
    if (b.dims()[i] != 1 && b.dims()[i] != a.dims()[axis + i]) {
      return ctx.Error(
          absl::StrCat("B ", DimsToString(b.dims()), " at axis ", axis, " does not match A ", DimsToString(a.dims())));
    }
    dims[axis + i] = b.dims()[i];
  }
  return b.Reshaped(dims);
}

template <Arith op>
class BinaryArith final : public OpKernel {
 public:
  explicit BinaryArith(const OpKernelInfo& info)
      : legacy_(info.node().since_version > 0 && info.node().since_version < 7),
        legacy_broadcast_(info.AttrOr<int64_t>("broadcast", 0) != 0),
        legacy_axis_(info.AttrOr<int64_t>("axis", kNoAxis)) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor* a = nullptr;
    const Tensor* b = nullptr;
    Tensor aligned;
    Dims out_dims;
    if (legacy_ && legacy_broadcast_) {
      ASSIGN_OR_RETURN(a, RequireInput(ctx, 0, "A"));
      ASSIGN_OR_RETURN(const Tensor* b_in, RequireInput(ctx, 1, "B"));
      if (a->type() != b_in->type()) {
        return ctx.Error(
            absl::StrCat("input types differ: ", DataTypeName(a->type()), " vs ", DataTypeName(b_in->type())));
      }
      ASSIGN_OR_RETURN(aligned, AlignLegacyOperand(ctx, *a, *b_in, legacy_axis_));
      b = &aligned;
      out_dims = a->dims();
    } else {
      ASSIGN_OR_RETURN(BinaryOperands operands, SameTypeOperands(ctx, "A", "B"));
      a = operands.a;
      b = operands.b;
      out_dims = std::move(operands.dims);
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, a->type()));
    return DispatchTypes<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, Half,
                         BFloat16>(a->type(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, Half>) {
        BroadcastBinary<uint16_t, uint16_t>(
            *a, *b, *y, [](uint16_t x, uint16_t z) { return FloatToHalf(Apply<op>(HalfToFloat(x), HalfToFloat(z))); });
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        BroadcastBinary<uint16_t, uint16_t>(*a, *b, *y, [](uint16_t x, uint16_t z) {
          return FloatToBFloat16(Apply<op>(BFloat16ToFloat(x), BFloat16ToFloat(z)));
        });
      } else {
        BroadcastBinary<T, T>(*a, *b, *y, [](T x, T z) { return Apply<op, T>(x, z); });
      }
      return absl::OkStatus();
    });
  }

 private:
  bool legacy_;
  bool legacy_broadcast_;
  int64_t legacy_axis_;
};

template <Arith op>
void RegisterArith(KernelRegistry& r, const char* name) {
  // Opsets 1-6 (with `broadcast`/`axis`) and 7+ (numpy broadcasting). Y may
  // take over either input's buffer when that input dies here and has Y's
  // size (so its shape: it is not broadcast): every loop of BroadcastBinary
  // reads a full-shaped operand at Y's own index before writing it.
  r.Register(KernelDefBuilder(name).Since(1, 6).Types("T", kNumericTypes).MayInplace(0, 0).MayInplace(1, 0).Build(),
             MakeFactory<BinaryArith<op>>());
  r.Register(KernelDefBuilder(name).Since(7).Types("T", kNumericTypes).MayInplace(0, 0).MayInplace(1, 0).Build(),
             MakeFactory<BinaryArith<op>>());
}

}  // namespace

void RegisterElementwiseKernels(KernelRegistry& r) {
  RegisterArith<Arith::kAdd>(r, "Add");
  RegisterArith<Arith::kSub>(r, "Sub");
  RegisterArith<Arith::kMul>(r, "Mul");
  RegisterArith<Arith::kDiv>(r, "Div");
}

}  // namespace onyx
