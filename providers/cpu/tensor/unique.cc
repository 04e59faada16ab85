// Unique: distinct elements (or distinct slices along `axis`), sorted or in
// order of first occurrence, with first-occurrence indices, inverse indices
// and counts. Slices compare lexicographically like numpy.unique(axis=...).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"
#include "providers/cpu/type_dispatch.h"

namespace onyx {
namespace {

template <typename T>
inline auto Key(const T& v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return ToFloat(v);
  else return v;
}

// A strict weak order even with NaN (NaN sorts last, all NaNs equal).
template <typename K>
inline bool Less(const K& a, const K& b) {
  if constexpr (std::is_floating_point_v<K>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

class Unique final : public OpKernel {
 public:
  explicit Unique(const OpKernelInfo& info)
      : sorted_(info.AttrOr<int64_t>("sorted", 1) != 0), has_axis_(info.HasAttr("axis")),
        axis_(info.AttrOr<int64_t>("axis", 0)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    Dims dims = x.dims();
    int64_t axis = axis_;
    if (!has_axis_) {
      dims = {x.num_elements()};
      axis = 0;
    } else if (!NormalizeAxis(axis, x.rank())) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", x.rank()));
    }
    const int64_t items = dims[axis];
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < axis; ++a) outer *= dims[a];
    for (int64_t a = axis + 1; a < static_cast<int64_t>(dims.size()); ++a) inner *= dims[a];

    // order: item indices sorted by content, ties by position.
    std::vector<int64_t> order(items);
    std::iota(order.begin(), order.end(), 0);
    std::vector<int64_t> group_of(items);  // item -> its group (first item of equal run in `order`)
    RETURN_IF_ERROR((DispatchTypes<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                                  uint32_t, uint64_t, bool, std::string>(x.type(), [&](auto tag) {
      using T = decltype(tag);
      const T* p = x.data<T>();
      auto compare = [&](int64_t a, int64_t b) {  // -1, 0, 1
        for (int64_t o = 0; o < outer; ++o) {
          const T* pa = p + (o * items + a) * inner;
          const T* pb = p + (o * items + b) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const auto ka = Key(pa[i]), kb = Key(pb[i]);
            if (Less(ka, kb)) return -1;
            if (Less(kb, ka)) return 1;
          }
        }
        return 0;
      };
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
      for (int64_t j = 0; j < items; ++j) {
        const bool same = j > 0 && compare(order[j - 1], order[j]) == 0;
        group_of[order[j]] = same ? group_of[order[j - 1]] : order[j];
      }
      return absl::OkStatus();
    })));
    // Unique representatives (first occurrences), in output order.
    std::vector<int64_t> reps;
    if (sorted_) {
      for (int64_t j = 0; j < items; ++j) {
        if (group_of[order[j]] == order[j]) reps.push_back(order[j]);
      }
    } else {
      for (int64_t i = 0; i < items; ++i) {
        if (group_of[i] == i) reps.push_back(i);
      }
    }
    const int64_t n = static_cast<int64_t>(reps.size());
    std::vector<int64_t> slot(items, -1);
    for (int64_t u = 0; u < n; ++u) slot[reps[u]] = u;

    Dims out_dims = dims;
    out_dims[axis] = n;
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, x.type()));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t u = 0; u < n; ++u) {
        CopyElements(x.type(), x.raw(), (o * items + reps[u]) * inner, y->mutable_raw(), (o * n + u) * inner, inner);
      }
    }
    ASSIGN_OR_RETURN(Tensor* first, ctx.Output(1, {n}, DataType::kInt64));
    ASSIGN_OR_RETURN(Tensor* inverse, ctx.Output(2, {items}, DataType::kInt64));
    ASSIGN_OR_RETURN(Tensor* counts, ctx.Output(3, {n}, DataType::kInt64));
    int64_t* pc = counts->mutable_data<int64_t>();
    std::fill(pc, pc + n, 0);
    for (int64_t u = 0; u < n; ++u) first->mutable_data<int64_t>()[u] = reps[u];
    for (int64_t i = 0; i < items; ++i) {
      const int64_t u = slot[group_of[i]];
      inverse->mutable_data<int64_t>()[i] = u;
      ++pc[u];
    }
    return absl::OkStatus();
  }

 private:
  bool sorted_, has_axis_;
  int64_t axis_;
};

}  // namespace

void RegisterUniqueKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Unique").Since(11).Build(), MakeFactory<Unique>());
}

}  // namespace onyx
