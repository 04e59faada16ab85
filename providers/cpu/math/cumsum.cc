// CumSum along one axis (an int32/int64 scalar input), with the exclusive and
// reverse attributes. Rows along the axis are walked with the non-axis inner
// block contiguous, so the update loop vectorises.
#include "common/parallel_for.h"
#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/math_kernels.h"

namespace onyx {
namespace {

class CumSum final : public OpKernel {
 public:
  explicit CumSum(const OpKernelInfo& info)
      : exclusive_(info.AttrOr<int64_t>("exclusive", 0) != 0), reverse_(info.AttrOr<int64_t>("reverse", 0) != 0) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "x"));
    ASSIGN_OR_RETURN(const Tensor* axis_t, RequireInput(ctx, 1, "axis"));
    if (axis_t->num_elements() != 1 || axis_t->rank() > 1 ||
        (axis_t->type() != DataType::kInt32 && axis_t->type() != DataType::kInt64)) {
      return ctx.Error(absl::StrCat("axis must be an int32/int64 scalar, received ", DataTypeName(axis_t->type()),
                                    " ", DimsToString(axis_t->dims())));
    }
    if (x->rank() == 0) return ctx.Error("input must have rank >= 1");
    auto axis = NormalizeAxis(ScalarAsInt64(*axis_t), x->rank());
    if (!axis.ok()) return ctx.Error(axis.status().message());
    int64_t outer = 1, inner = 1;
    const int64_t len = x->dims()[*axis];
    for (int64_t d = 0; d < x->rank(); ++d) {
      if (d < *axis) outer *= x->dims()[d];
      if (d > *axis) inner *= x->dims()[d];
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), x->type()));
    Tensor xf = UpcastToFloat(*x);
    Tensor yf = IsHalfLike(x->type()) ? Tensor::Allocate(DataType::kFloat, x->dims()) : *y;
    absl::Status s = DispatchList(NumericCompute{}, xf.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = xf.data<T>();
      T* py = yf.mutable_data<T>();
      ParallelFor(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, len * inner)),
                  [&](int64_t begin, int64_t end) {
        std::vector<T> acc(inner);
        for (int64_t o = begin; o < end; ++o) {
          std::fill(acc.begin(), acc.end(), T(0));
          for (int64_t step = 0; step < len; ++step) {
            const int64_t j = reverse_ ? len - 1 - step : step;
            const T* src = px + (o * len + j) * inner;
            T* dst = py + (o * len + j) * inner;
            if (exclusive_) {
              for (int64_t i = 0; i < inner; ++i) {
                dst[i] = acc[i];
                acc[i] = static_cast<T>(acc[i] + src[i]);
              }
            } else {
              for (int64_t i = 0; i < inner; ++i) {
                acc[i] = static_cast<T>(acc[i] + src[i]);
                dst[i] = acc[i];
              }
            }
          }
        }
      });
      return absl::OkStatus();
    });
    if (!s.ok()) return ctx.Error(s.message());
    if (IsHalfLike(x->type())) DowncastFromFloat(yf, *y);
    return absl::OkStatus();
  }

 private:
  bool exclusive_;
  bool reverse_;
};

}  // namespace

void RegisterCumSumKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("CumSum").Since(11).Build(), MakeFactory<CumSum>());
}

}  // namespace onyx
