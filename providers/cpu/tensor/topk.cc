// TopK: the k largest (or smallest) values along an axis and their indices.
// Equal values keep the lower index first; NaN ranks above every number.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

template <typename T>
inline auto Key(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return ToFloat(v);
  else return v;
}

template <typename K>
inline bool Greater(K a, K b) {  // a ranks above b; NaN is the largest
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
}

class TopK final : public OpKernel {
 public:
  explicit TopK(const OpKernelInfo& info)
      : axis_(info.AttrOr<int64_t>("axis", -1)),
        largest_(info.AttrOr<int64_t>("largest", 1) != 0),
        k_attr_(info.node().since_version < 10 ? info.AttrOr<int64_t>("k", -1) : -1) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    int64_t k = k_attr_;
    if (const Tensor* kt = ctx.Input(1)) {
      std::vector<int64_t> v;
      absl::Status s = ReadInt64s(*kt, "input 'K'", &v);
      if (!s.ok() || v.size() != 1) return ctx.Error("input 'K' must hold one int64 value");
      k = v[0];
    }
    int64_t axis = axis_;
    if (!NormalizeAxis(axis, x.rank())) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", x.rank()));
    }
    const int64_t extent = x.dims()[axis];
    if (k < 0 || k > extent) {
      return ctx.Error(absl::StrCat("k = ", k, " is out of range for axis ", axis, " of size ", extent));
    }
    Dims out_dims = x.dims();
    out_dims[axis] = k;
    ASSIGN_OR_RETURN(Tensor* values, ctx.Output(0, out_dims, x.type()));
    ASSIGN_OR_RETURN(Tensor* indices, ctx.Output(1, out_dims, DataType::kInt64));
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < axis; ++a) outer *= x.dims()[a];
    for (int64_t a = axis + 1; a < x.rank(); ++a) inner *= x.dims()[a];
    return DispatchTypes<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                         uint32_t, uint64_t>(x.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* vo = values->mutable_data<T>();
      int64_t* io = indices->mutable_data<int64_t>();
      ParallelFor(outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, extent)), [&](int64_t b, int64_t e) {
        std::vector<int64_t> order(extent);
        for (int64_t s = b; s < e; ++s) {
          const int64_t o = s / inner, i = s % inner;
          const T* base = in + o * extent * inner + i;
          std::iota(order.begin(), order.end(), 0);
          auto before = [&](int64_t p, int64_t q) {
            const auto a = Key(base[p * inner]), c = Key(base[q * inner]);
            if (largest_ ? Greater(a, c) : Greater(c, a)) return true;
            if (largest_ ? Greater(c, a) : Greater(a, c)) return false;
            return p < q;
          };
          std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
          for (int64_t j = 0; j < k; ++j) {
            const int64_t dst = (o * k + j) * inner + i;
            vo[dst] = base[order[j] * inner];
            io[dst] = order[j];
          }
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  int64_t axis_;
  bool largest_;
  int64_t k_attr_;
};

}  // namespace

void RegisterTopKKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("TopK").Since(1).Build(), MakeFactory<TopK>());
}

}  // namespace onyx
