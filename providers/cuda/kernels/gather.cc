// Gather along one axis, any element type, int32 or int64 indices (negative
// ones count from the end). Data and indices may both be constant
// initializers (an embedding table; a fixed index), uploaded once.
// Out-of-range indices cannot fail a kernel already enqueued: they give zeros.
#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"
#include "providers/cuda/kernels/launch.h"

namespace onyx::cuda_ops {
namespace {

class Gather final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto k = std::unique_ptr<Gather>(new Gather(info.AttrOr<int64_t>("axis", 0)));
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1));
    if (indices->type() != DataType::kInt32 && indices->type() != DataType::kInt64) {
      return ctx.Error(absl::StrCat("indices must be int32 or int64, received ", DataTypeName(indices->type())));
    }
    int64_t axis = axis_;
    if (!NormalizeAxis(axis, x->rank())) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", x->rank()));
    }
    Dims out_dims(x->dims().begin(), x->dims().begin() + axis);
    out_dims.insert(out_dims.end(), indices->dims().begin(), indices->dims().end());
    out_dims.insert(out_dims.end(), x->dims().begin() + axis + 1, x->dims().end());
    RETURN_IF_ERROR(CheckIndexable(ctx, x->num_elements(), "input 0"));
    RETURN_IF_ERROR(CheckIndexable(ctx, NumElements(out_dims), "the output"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, x->type()));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < x->rank(); ++d) {
      if (d < axis) outer *= x->dims()[d];
      if (d > axis) inner *= x->dims()[d];
    }
    return CheckLaunch(
        ctx, LaunchGather(ElementSize(x->type()), indices->type(), x->raw(), indices->raw(), y->mutable_raw(), outer,
                          x->dims()[axis], indices->num_elements(), inner, CurrentCudaLane().stream));
  }

 private:
  explicit Gather(int64_t axis) : axis_(axis) {}
  int64_t axis_;
};

}  // namespace

void RegisterGatherKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Gather").Since(1).Types("T", kCudaCopyTypes).Types("Tind", kCudaIndexTypes).Build(),
             Gather::Create);
}

}  // namespace onyx::cuda_ops
