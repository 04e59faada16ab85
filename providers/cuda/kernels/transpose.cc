// Transpose of any element type: dims of 1 dropped and adjacent dims that
// stay together merged first; what remains is a plain copy, a batched 2-D
// transpose (shared-memory tiles) or a strided copy moving the innermost
// contiguous run in units of up to 16 bytes.
#include <numeric>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/broadcast.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"
#include "providers/cuda/kernels/launch.h"

namespace onyx::cuda_ops {
namespace {

class Transpose final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<Transpose>(new Transpose(info.AttrOr<std::vector<int64_t>>("perm", {})));
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    const int64_t rank = x->rank();
    std::vector<int64_t> perm = perm_;
    if (perm.empty()) {
      perm.resize(rank);
      std::iota(perm.rbegin(), perm.rend(), 0);
    }
    std::vector<bool> seen(rank, false);
    if (static_cast<int64_t>(perm.size()) != rank) {
      return ctx.Error(absl::StrCat("perm has ", perm.size(), " entries for an input of rank ", rank));
    }
    Dims out_dims;
    for (int64_t& p : perm) {
      if (!NormalizeAxis(p, rank) || seen[p]) return ctx.Error("perm is not a permutation of the input's axes");
      seen[p] = true;
      out_dims.push_back(x->dims()[p]);
    }
    RETURN_IF_ERROR(CheckIndexable(ctx, x->num_elements(), "input 0"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, x->type()));
    if (x->num_elements() == 0) return absl::OkStatus();
    size_t elem = ElementSize(x->type());
    auto plan = PlanTranspose(x->dims(), perm, elem);
    if (!plan.ok()) return ctx.Error(plan.status().message());
    const cudaStream_t stream = CurrentCudaLane().stream;
    switch (plan->kind) {
      case TransposePlan::Kind::kCopy:
        return CheckLaunch(
            ctx, cudaMemcpyAsync(y->mutable_raw(), x->raw(), x->byte_size(), cudaMemcpyDeviceToDevice, stream));
      case TransposePlan::Kind::kTiled:
        return CheckLaunch(
            ctx, LaunchTranspose2D(elem, plan->batch, plan->rows, plan->cols, x->raw(), y->mutable_raw(), stream));
      case TransposePlan::Kind::kStrided: {
        StridedCopyArgs args = plan->strided;
        WidenInnermost(args, elem, x->raw(), y->raw());
        return CheckLaunch(ctx, LaunchStridedCopy(elem, args, x->raw(), y->mutable_raw(), stream));
      }
    }
    return absl::OkStatus();
  }

 private:
  explicit Transpose(std::vector<int64_t> perm) : perm_(std::move(perm)) {}
  std::vector<int64_t> perm_;  // empty: reverse the axes
};

}  // namespace

void RegisterTransposeKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Transpose").Since(1).Types("T", kCudaCopyTypes).Build(), Transpose::Create);
}

}  // namespace onyx::cuda_ops
