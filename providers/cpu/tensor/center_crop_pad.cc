// CenterCropPad-18: each named axis is cropped or zero-padded to the
// requested length around its centre. Where the difference is odd, the extra
// element is cropped from (or padded at) the end: the kept region starts at
// floor((dim - length) / 2), the input lands at floor((length - dim) / 2), as
// ONNX's function body (Pad then Slice) computes it.
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

class CenterCropPad final : public OpKernel {
 public:
  explicit CenterCropPad(const OpKernelInfo& info) : axes_(info.AttrOr<std::vector<int64_t>>("axes", {})) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 2));
    const Tensor& x = *ctx.Input(0);
    const int64_t rank = x.rank();
    std::vector<int64_t> lengths;
    absl::Status s = ReadInt64s(*ctx.Input(1), "input 'shape'", &lengths);
    if (!s.ok()) return ctx.Error(s.message());
    std::vector<int64_t> axes = axes_;
    if (axes.empty()) {
      for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
    }
    if (lengths.size() != axes.size()) {
      return ctx.Error(absl::StrCat("shape has ", lengths.size(), " entries, expected ", axes.size(),
                                    axes_.empty() ? " (the input's rank)" : " (one per axis)"));
    }
    Dims out_dims = x.dims();
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i];
      if (!NormalizeAxis(a, rank))
        return ctx.Error(absl::StrCat("axes entry ", axes[i], " is out of range for rank ", rank));
      if (seen[a]) return ctx.Error(absl::StrCat("axes names axis ", a, " more than once"));
      if (lengths[i] < 0) return ctx.Error(absl::StrCat("shape[", i, "] = ", lengths[i], " is negative"));
      seen[a] = true;
      out_dims[a] = lengths[i];
    }
    RETURN_IF_ERROR(CheckOutputDims(ctx, out_dims));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, x.type()));  // zero-filled: the padding
    Dims region(rank);
    int64_t src_off = 0, dst_off = 0;
    const Dims in_strides = StridesOf(x.dims()), out_strides = StridesOf(out_dims);
    for (int64_t a = 0; a < rank; ++a) {
      const int64_t dim = x.dims()[a], len = out_dims[a];
      region[a] = std::min(dim, len);
      if (dim > len) src_off += (dim - len) / 2 * in_strides[a];
      if (len > dim) dst_off += (len - dim) / 2 * out_strides[a];
    }
    if (NumElements(region) == 0) return absl::OkStatus();
    const size_t es = ElementSize(x.type());
    StridedCopy(x.type(), static_cast<const char*>(x.raw()) + src_off * es, in_strides,
                static_cast<char*>(y->mutable_raw()) + dst_off * es, out_strides, region);
    return absl::OkStatus();
  }

 private:
  std::vector<int64_t> axes_;  // empty: every axis
};

}  // namespace

void RegisterCenterCropPadKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("CenterCropPad").Since(18, 18).Build(), MakeFactory<CenterCropPad>());
}

}  // namespace onyx
