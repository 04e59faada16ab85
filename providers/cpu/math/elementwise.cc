// Element-wise arithmetic (Add, Sub, Mul, Div) with numpy broadcasting.
// float16/bfloat16 compute in float.
#include <cmath>

#include "onyx/status_macros.h"
#include "framework/op_kernel.h"
#include "providers/cpu/math/math_kernels.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

enum class Arith { kAdd, kSub, kMul, kDiv };

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

template <Arith op>
class BinaryArith final : public OpKernel {
 public:
  explicit BinaryArith(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(BinaryOperands operands, SameTypeOperands(ctx, "A", "B"));
    const Tensor* a = operands.a;
    const Tensor* b = operands.b;
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, operands.dims, a->type()));
    return DispatchTypes<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                         uint64_t, Half, BFloat16>(a->type(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, Half>) {
        BroadcastBinary<uint16_t, uint16_t>(*a, *b, *y, [](uint16_t x, uint16_t z) {
          return FloatToHalf(Apply<op>(HalfToFloat(x), HalfToFloat(z)));
        });
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
};

template <Arith op>
void RegisterArith(KernelRegistry& r, const char* name) {
  r.Register(KernelDefBuilder(name).Since(7).Types("T", kNumericTypes).Build(), MakeFactory<BinaryArith<op>>());
}

}  // namespace

void RegisterElementwiseKernels(KernelRegistry& r) {
  RegisterArith<Arith::kAdd>(r, "Add");
  RegisterArith<Arith::kSub>(r, "Sub");
  RegisterArith<Arith::kMul>(r, "Mul");
  RegisterArith<Arith::kDiv>(r, "Div");
}

}  // namespace onyx
