// BitwiseAnd, BitwiseOr, BitwiseXor (numpy broadcasting) and BitwiseNot, all
// opset 18, on every integer type; signed values act on their two's
// complement bits.
#include "onyx/status_macros.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/math_kernels.h"
#include "providers/cpu/math/unary_kernel.h"

namespace onyx {
namespace {

using IntegerCompute = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;

enum class BitOp { kAnd, kOr, kXor };

template <BitOp op>
class BitwiseBinary final : public OpKernel {
 public:
  explicit BitwiseBinary(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(BinaryOperands operands, SameTypeOperands(ctx, "A", "B"));
    ASSIGN_OR_RETURN(Tensor* c, ctx.Output(0, operands.dims, operands.a->type()));
    absl::Status s = DispatchList(IntegerCompute{}, operands.a->type(), [&](auto tag) {
      using T = decltype(tag);
      BroadcastBinary<T, T>(*operands.a, *operands.b, *c, [](T a, T b) -> T {
        if constexpr (op == BitOp::kAnd) return static_cast<T>(a & b);
        else if constexpr (op == BitOp::kOr) return static_cast<T>(a | b);
        else return static_cast<T>(a ^ b);
      });
      return absl::OkStatus();
    });
    return s.ok() ? s : ctx.Error(s.message());
  }
};

class BitwiseNot final : public OpKernel {
 public:
  explicit BitwiseNot(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), x->type()));
    absl::Status s = DispatchList(IntegerCompute{}, x->type(), [&](auto tag) {
      using T = decltype(tag);
      MapElements(x->data<T>(), y->mutable_data<T>(), x->num_elements(), [](T v) { return static_cast<T>(~v); });
      return absl::OkStatus();
    });
    return s.ok() ? s : ctx.Error(s.message());
  }
};

}  // namespace

void RegisterBitwiseKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("BitwiseAnd").Since(18).Types("T", kIntTypes).Build(),
             MakeFactory<BitwiseBinary<BitOp::kAnd>>());
  r.Register(KernelDefBuilder("BitwiseOr").Since(18).Types("T", kIntTypes).Build(),
             MakeFactory<BitwiseBinary<BitOp::kOr>>());
  r.Register(KernelDefBuilder("BitwiseXor").Since(18).Types("T", kIntTypes).Build(),
             MakeFactory<BitwiseBinary<BitOp::kXor>>());
  r.Register(KernelDefBuilder("BitwiseNot").Since(18).Types("T", kIntTypes).MayInplace(0, 0).Build(),
             MakeFactory<BitwiseNot>());
}

}  // namespace onyx
