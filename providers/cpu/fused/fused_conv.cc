// com.onyx FusedConv(X, W, B?, Z?): Conv, then + Z (same shape), then the
// activation (`activation`, `activation_params`). With constant float weights the oneDNN convolution
// computes all three in one primitive (the sum and activation as post-ops);
// otherwise they are applied in place on the CPU Conv kernel's output.
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/nn/dnnl_conv.h"

namespace onyx {
namespace {

class FusedConv final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ConvPostOps post_ops;
    ASSIGN_OR_RETURN(post_ops.activation, ParseFusedActivation(info));
    post_ops.residual = info.HasInput(3);
    ASSIGN_OR_RETURN(std::unique_ptr<DnnlConvolution> dnnl, CreateDnnlConvolutionFor(info, post_ops));
    if (dnnl != nullptr) return std::unique_ptr<OpKernel>(new FusedConv(nullptr, std::move(dnnl), post_ops.activation));
    // The convolution itself is the CPU provider's Conv kernel (it ignores the
    // extra Z input).
    ASSIGN_OR_RETURN(auto conv, CreateWrappedCpuKernel(info, "Conv"));
    return std::unique_ptr<OpKernel>(new FusedConv(std::move(conv), nullptr, post_ops.activation));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(RequireFloatInput(ctx, "FusedConv"));
    if (dnnl_ != nullptr) {
      const Tensor& x = *ctx.Input(0);
      auto out_dims = dnnl_->OutputDims(x.dims());
      if (!out_dims.ok()) return ctx.Error(out_dims.status().message());
      ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, *out_dims, DataType::kFloat));
      absl::Status status = dnnl_->Run(x, ctx.Input(3), *y);
      return status.ok() ? status : ctx.Error(status.message());
    }
    RETURN_IF_ERROR(conv_->Compute(ctx));
    Tensor* y = ctx.OutputTensor(0);
    if (y == nullptr) return ctx.Error("FusedConv produced no output");
    const Tensor* z = ctx.Input(3);
    if (z != nullptr && (z->dims() != y->dims() || z->type() != DataType::kFloat)) {
      return ctx.Error("residual Z " + DimsToString(z->dims()) + " does not match the output " +
                       DimsToString(y->dims()));
    }
    float* py = y->mutable_data<float>();
    const float* pz = z ? z->data<float>() : nullptr;
    if (pz != nullptr) {
      ParallelFor(y->num_elements(), 16384, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) py[i] += pz[i];
      });
    }
    ApplyActivation(activation_, py, y->num_elements());
    return absl::OkStatus();
  }

 private:
  FusedConv(std::unique_ptr<OpKernel> conv, std::unique_ptr<DnnlConvolution> dnnl, ConvActivation activation)
      : conv_(std::move(conv)), dnnl_(std::move(dnnl)), activation_(activation) {}
  std::unique_ptr<OpKernel> conv_;         // the reference path, or
  std::unique_ptr<DnnlConvolution> dnnl_;  // the oneDNN primitive with its post-ops
  ConvActivation activation_;
};

}  // namespace

KernelFactory FusedConvFactory() { return MakeFactory<FusedConv>(); }

void RegisterFusedConvKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("FusedConv").Domain(kOnyxDomain).Build(), FusedConvFactory());
}

}  // namespace onyx
