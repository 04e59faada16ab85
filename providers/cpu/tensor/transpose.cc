// Transpose. A permutation that keeps the order of the non-1 axes is a
// reshape (no copy); otherwise a strided copy that walks the output
// contiguously, with 2-D tiles when the innermost read is strided.
#include <numeric>

#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "providers/cpu/tensor/copy_util.h"
#include "providers/cpu/tensor/input_util.h"
#include "providers/cpu/tensor/tensor_kernels.h"

namespace onyx {
namespace {

class Transpose final : public OpKernel {
 public:
  explicit Transpose(const OpKernelInfo& info)
      : perm_(info.AttrOr<std::vector<int64_t>>("perm", {})), has_perm_(info.HasAttr("perm")) {}

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(CheckTensorInputs(ctx, 1));
    const Tensor& x = *ctx.Input(0);
    const int64_t rank = x.rank();
    std::vector<int64_t> perm = perm_;
    if (!has_perm_) {
      perm.resize(rank);
      std::iota(perm.rbegin(), perm.rend(), 0);
    }
    if (static_cast<int64_t>(perm.size()) != rank) {
      return ctx.Error(absl::StrCat("perm has ", perm.size(), " entries but the input has rank ", rank));
    }
    std::vector<bool> seen(rank, false);
    for (int64_t& p : perm) {
      int64_t a = p;
      if (!NormalizeAxis(a, rank) || seen[a]) {
        return ctx.Error(absl::StrCat("perm is not a permutation of 0..", rank - 1));
      }
      seen[a] = true;
      p = a;
    }
    Dims out_dims(rank), src_strides(rank);
    const Dims in_strides = StridesOf(x.dims());
    for (int64_t i = 0; i < rank; ++i) {
      out_dims[i] = x.dims()[perm[i]];
      src_strides[i] = in_strides[perm[i]];
    }
    // Order-preserving on the non-1 axes: only the shape changes.
    int64_t last = -1;
    bool ordered = true;
    for (int64_t i = 0; i < rank; ++i) {
      if (out_dims[i] == 1) continue;
      ordered &= perm[i] > last;
      last = perm[i];
    }
    if (ordered) {
      ctx.SetOutput(0, Value(x.Reshaped(out_dims)));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, x.type()));
    StridedCopy(x.type(), x.raw(), src_strides, y->mutable_raw(), StridesOf(out_dims), out_dims);
    return absl::OkStatus();
  }

 private:
  std::vector<int64_t> perm_;
  bool has_perm_;
};

}  // namespace

void RegisterTransposeKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Transpose").Since(1).Build(), MakeFactory<Transpose>());
}

}  // namespace onyx
