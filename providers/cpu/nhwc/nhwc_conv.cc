// com.onyx NhwcConv(X, W, B?, Z?): FusedConv on channels-last activations.
// X, Z and Y are [N, H, W, C]; W stays [M, C/group, kH, kW] and B [M]. The
// oneDNN primitive runs NHWC natively, so a chain of these converts nothing
// between convolutions.
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/nhwc/nhwc_kernels.h"
#include "providers/cpu/nn/dnnl_conv.h"

namespace onyx {
namespace {

class NhwcConv final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ConvPostOps post_ops;
    ASSIGN_OR_RETURN(post_ops.activation, ParseFusedActivation(info));
    post_ops.residual = info.HasInput(3);
    const Tensor* w = info.ConstantInput(1);
    if (w == nullptr || w->type() != DataType::kFloat || w->rank() != 4) {
      return info.Error("W must be a constant float [M, C/group, kH, kW] initializer");
    }
    if (info.HasInput(2) && info.ConstantInput(2) == nullptr) return info.Error("B must be a constant initializer");
    ASSIGN_OR_RETURN(std::unique_ptr<DnnlConvolution> conv,
                     CreateDnnlConvolutionFor(info, post_ops, ConvLayout::kChannelsLast));
    if (conv == nullptr) return info.Error("oneDNN has no channels-last convolution for this node");
    return std::unique_ptr<OpKernel>(new NhwcConv(std::move(conv)));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(RequireFloatInput(ctx, "NhwcConv"));
    const Tensor& x = *ctx.Input(0);
    auto out_dims = conv_->OutputDims(x.dims());
    if (!out_dims.ok()) return ctx.Error(out_dims.status().message());
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, *out_dims, DataType::kFloat));
    absl::Status status = conv_->Run(x, ctx.Input(3), *y);
    return status.ok() ? status : ctx.Error(status.message());
  }

 private:
  explicit NhwcConv(std::unique_ptr<DnnlConvolution> conv) : conv_(std::move(conv)) {}
  std::unique_ptr<DnnlConvolution> conv_;
};

}  // namespace

void RegisterNhwcConvKernels(KernelRegistry& r) {
  // Y may take over the residual Z's buffer: the primitive adds Z through
  // its sum post-op, reading each element of Y before writing it, so a Z that
  // dies here costs no copy into Y.
  r.Register(KernelDefBuilder("NhwcConv").Domain(kOnyxDomain).MayInplace(3, 0).Build(), MakeFactory<NhwcConv>());
}

}  // namespace onyx
