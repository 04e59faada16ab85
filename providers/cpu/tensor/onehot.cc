// OneHot: indices (negative count from depth; out of range -> all off) to
// one-hot vectors along `axis`.
#include <cmath>

#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/cast.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

// Reads every element of a numeric tensor as double.
absl::Status AsDoubles(const OpKernelContext& ctx, const Tensor& t, absl::string_view what, std::vector<double>* out) {
  Tensor d = Tensor::Allocate(DataType::kDouble, {t.num_elements()});
  if (t.type() == DataType::kString || !CastElements(t, d).ok()) {
    return ctx.Error(absl::StrCat(what, " must be numeric, received ", DataTypeName(t.type())));
  }
  out->assign(d.data<double>(), d.data<double>() + d.num_elements());
  return absl::OkStatus();
}

class OneHot final : public OpKernel {
 public:
  explicit OneHot(const OpKernelInfo& info) : axis_(info.AttrOr<int64_t>("axis", -1)) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 3));
    const Tensor& indices = *ctx.Input(0);
    const Tensor& depth_t = *ctx.Input(1);
    const Tensor& values = *ctx.Input(2);
    std::vector<double> idx, depth_v;
    RETURN_IF_ERROR(AsDoubles(ctx, indices, "indices", &idx));
    RETURN_IF_ERROR(AsDoubles(ctx, depth_t, "depth", &depth_v));
    if (depth_v.size() != 1 || !(depth_v[0] >= 1) || !(depth_v[0] < static_cast<double>(int64_t{1} << 48))) {
      return ctx.Error("depth must be one value >= 1");
    }
    if (values.num_elements() != 2) {
      return ctx.Error(absl::StrCat("values must hold [off, on], received shape ", DimsToString(values.dims())));
    }
    const int64_t depth = static_cast<int64_t>(depth_v[0]);
    const int64_t out_rank = indices.rank() + 1;
    int64_t axis = axis_;
    if (!NormalizeAxis(axis, out_rank)) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for output rank ", out_rank));
    }
    Dims out_dims(indices.dims().begin(), indices.dims().end());
    out_dims.insert(out_dims.begin() + axis, depth);
    RETURN_IF_ERROR(CheckOutputDims(ctx, out_dims));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, values.type()));
    int64_t outer = 1, inner = 1;
    for (int64_t a = 0; a < axis; ++a) outer *= out_dims[a];
    for (int64_t a = axis + 1; a < out_rank; ++a) inner *= out_dims[a];
    FillElements(values.type(), values.raw(), y->mutable_raw(), y->num_elements());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const double dv = idx[o * inner + i];
        if (!(dv > -static_cast<double>(depth) - 1 && dv < static_cast<double>(depth))) continue;  // NaN too
        int64_t v = static_cast<int64_t>(dv);
        if (v < 0) v += depth;
        if (v < 0 || v >= depth) continue;
        CopyElements(values.type(), values.raw(), 1, y->mutable_raw(), (o * depth + v) * inner + i, 1);
      }
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
};

}  // namespace

void RegisterOneHotKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("OneHot").Since(9).Build(), MakeFactory<OneHot>());
}

}  // namespace onyx
