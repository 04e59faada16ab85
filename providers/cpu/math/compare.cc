// Comparisons (Equal, Less, LessOrEqual, Greater, GreaterOrEqual) and logical
// ops (And, Or, Xor) with numpy broadcasting and bool outputs. Equal also
// compares strings (Equal-19).
#include <string>

#include "onyx/status_macros.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/math_kernels.h"

namespace onyx {
namespace {

enum class Cmp { kEqual, kLess, kLessOrEqual, kGreater, kGreaterOrEqual, kAnd, kOr, kXor };

template <Cmp op, typename T>
inline bool Apply(T a, T b) {
  if constexpr (op == Cmp::kEqual) return a == b;
  if constexpr (op == Cmp::kLess) return a < b;
  if constexpr (op == Cmp::kLessOrEqual) return a <= b;
  if constexpr (op == Cmp::kGreater) return a > b;
  if constexpr (op == Cmp::kGreaterOrEqual) return a >= b;
  if constexpr (op == Cmp::kAnd) return a && b;
  if constexpr (op == Cmp::kOr) return a || b;
  if constexpr (op == Cmp::kXor) return a != b;
}

template <Cmp op>
class Compare final : public OpKernel {
 public:
  explicit Compare(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(BinaryOperands operands, SameTypeOperands(ctx, "A", "B"));
    const Tensor* a = operands.a;
    const Tensor* b = operands.b;
    ASSIGN_OR_RETURN(Tensor* c, ctx.Output(0, operands.dims, DataType::kBool));
    Tensor af = UpcastToFloat(*a), bf = UpcastToFloat(*b);
    absl::Status s;
    if constexpr (op == Cmp::kAnd || op == Cmp::kOr || op == Cmp::kXor) {
      s = DispatchTypes<bool>(af.type(), [&](auto) {
        BroadcastBinary<bool, bool>(af, bf, *c, [](bool x, bool y) { return Apply<op>(x, y); });
        return absl::OkStatus();
      });
    } else if (op == Cmp::kEqual && af.type() == DataType::kString) {  // Equal-19
      BroadcastBinary<std::string, bool>(af, bf, *c, [](const std::string& x, const std::string& y) { return x == y; });
    } else {
      s = DispatchTypes<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, bool>(
          af.type(), [&](auto tag) {
            using T = decltype(tag);
            BroadcastBinary<T, bool>(af, bf, *c, [](T x, T y) { return Apply<op>(x, y); });
            return absl::OkStatus();
          });
    }
    if (!s.ok()) return ctx.Error(s.message());
    return s;
  }
};

template <Cmp op>
void Add(KernelRegistry& r, const char* name, int since) {
  r.Register(KernelDefBuilder(name).Since(since).Build(), MakeFactory<Compare<op>>());
}

}  // namespace

void RegisterCompareKernels(KernelRegistry& r) {
  Add<Cmp::kEqual>(r, "Equal", 1);
  Add<Cmp::kLess>(r, "Less", 1);
  Add<Cmp::kLessOrEqual>(r, "LessOrEqual", 12);
  Add<Cmp::kGreater>(r, "Greater", 1);
  Add<Cmp::kGreaterOrEqual>(r, "GreaterOrEqual", 12);
  Add<Cmp::kAnd>(r, "And", 1);
  Add<Cmp::kOr>(r, "Or", 1);
  Add<Cmp::kXor>(r, "Xor", 1);
}

}  // namespace onyx
