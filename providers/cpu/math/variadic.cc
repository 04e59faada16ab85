// Variadic element-wise Max, Min, Sum and Mean with numpy broadcasting across
// all inputs. The output starts as the first input broadcast to the result
// shape and folds in each further input.
#include <cmath>

#include "onyx/status_macros.h"
#include "providers/cpu/math/broadcast.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/math_kernels.h"

namespace onyx {
namespace {

enum class Fold { kMax, kMin, kSum, kMean };

template <Fold op, typename T>
inline T Combine(T a, T b) {
  if constexpr (op == Fold::kMax) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
    }
    return a < b ? b : a;
  } else if constexpr (op == Fold::kMin) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
    }
    return b < a ? b : a;
  } else {
    return static_cast<T>(a + b);
  }
}

template <Fold op>
class Variadic final : public OpKernel {
 public:
  explicit Variadic(const OpKernelInfo&) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    const int n = ctx.InputCount();
    if (n == 0) return ctx.Error("at least one input is required");
    std::vector<Tensor> inputs;
    ASSIGN_OR_RETURN(const Tensor* first, RequireInput(ctx, 0, "data_0"));
    Dims dims = first->dims();
    for (int i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(const Tensor* t, RequireInput(ctx, i, absl::StrCat("data_", i)));
      if (t->type() != first->type()) {
        return ctx.Error(absl::StrCat("input ", i, " has type ", DataTypeName(t->type()), ", expected ",
                                      DataTypeName(first->type())));
      }
      auto shape = BroadcastShape(dims, t->dims());
      if (!shape.ok()) return ctx.Error(shape.status().message());
      dims = *shape;
      inputs.push_back(UpcastToFloat(*t));
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, dims, first->type()));
    const bool half = IsHalfLike(first->type());
    Tensor acc = half ? Tensor::Allocate(DataType::kFloat, dims) : *y;
    absl::Status s = DispatchList(NumericCompute{}, inputs[0].type(), [&](auto tag) {
      using T = decltype(tag);
      Tensor zero = Tensor::Allocate(inputs[0].type(), {});
      BroadcastBinary<T, T>(inputs[0], zero, acc, [](T v, T) { return v; });
      for (int i = 1; i < n; ++i) {
        BroadcastBinary<T, T>(acc, inputs[i], acc, [](T a, T b) { return Combine<op, T>(a, b); });
      }
      if constexpr (op == Fold::kMean) {
        T* p = acc.mutable_data<T>();
        for (int64_t i = 0; i < acc.num_elements(); ++i) p[i] = static_cast<T>(p[i] / static_cast<T>(n));
      }
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    if (half) DowncastFromFloat(acc, *y);
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterVariadicKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Max").Since(1).Types("T", kNumericTypes).Build(), MakeFactory<Variadic<Fold::kMax>>());
  r.Register(KernelDefBuilder("Min").Since(1).Types("T", kNumericTypes).Build(), MakeFactory<Variadic<Fold::kMin>>());
  r.Register(KernelDefBuilder("Sum").Since(1).Types("T", kFloatTypes).Build(), MakeFactory<Variadic<Fold::kSum>>());
  r.Register(KernelDefBuilder("Mean").Since(1).Types("T", kFloatTypes).Build(), MakeFactory<Variadic<Fold::kMean>>());
}

}  // namespace onyx
