// Softmax and LogSoftmax. Opset 13 normalises along `axis` (default -1);
// earlier opsets coerce the input to 2-D at `axis` (default 1) and normalise
// each row.
#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/kernel_tables.h"
#include "providers/cuda/kernels/kernel_util.h"
#include "providers/cuda/kernels/launch.h"

namespace onyx::cuda_ops {
namespace {

class Softmax final : public CudaKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info, bool log_softmax) {
    const bool opset13 = info.node().since_version >= 13;
    auto k =
        std::unique_ptr<Softmax>(new Softmax(log_softmax, opset13, info.AttrOr<int64_t>("axis", opset13 ? -1 : 1)));
    RETURN_IF_ERROR(k->UploadConstantInputs(info));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0));
    if (x->type() != DataType::kFloat && x->type() != DataType::kFloat16) {
      return ctx.Error(absl::StrCat("computes float and float16 on CUDA, received ", DataTypeName(x->type())));
    }
    RETURN_IF_ERROR(CheckIndexable(ctx, x->num_elements(), "input 0"));
    const int64_t rank = x->rank();
    int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (rank == 0) axis = 0;
    // Before opset 13 axis == rank is allowed (rows of one element).
    const int64_t max_axis = opset13_ ? rank - 1 : rank;
    if (axis < 0 || (rank > 0 && axis > max_axis)) {
      return ctx.Error(absl::StrCat("axis ", axis_, " is out of range for rank ", rank));
    }
    int64_t outer = 1, d = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t v = x->dims()[i];
      if (i < axis) outer *= v;
      else if (i == axis || !opset13_) d *= v;
      else inner *= v;
    }
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, x->dims(), x->type()));
    return CheckLaunch(ctx, LaunchSoftmax(x->type(), x->raw(), y->mutable_raw(), outer, d, inner, log_softmax_,
                                          CurrentCudaLane().stream));
  }

 private:
  Softmax(bool log_softmax, bool opset13, int64_t axis) : log_softmax_(log_softmax), opset13_(opset13), axis_(axis) {}
  bool log_softmax_;
  bool opset13_;
  int64_t axis_;
};

}  // namespace

void RegisterSoftmaxKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Softmax").Since(1).Types("T", kCudaFloatTypes).Build(),
             [](const OpKernelInfo& info) { return Softmax::Create(info, false); });
  r.Register(KernelDefBuilder("LogSoftmax").Since(1).Types("T", kCudaFloatTypes).Build(),
             [](const OpKernelInfo& info) { return Softmax::Create(info, true); });
}

}  // namespace onyx::cuda_ops
