// com.onyx FusedGemm(A, B, C?): the ONNX Gemm with its attributes, then the
// activation ("Relu") applied in place on the product while it is in cache.
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"

namespace onyx {
namespace {

class FusedGemm final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(bool relu, ParseReluActivation(info));
    ASSIGN_OR_RETURN(auto gemm, CreateWrappedCpuKernel(info, "Gemm"));
    return std::unique_ptr<OpKernel>(new FusedGemm(std::move(gemm), relu));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(RequireFloatInput(ctx, "FusedGemm"));
    RETURN_IF_ERROR(gemm_->Compute(ctx));
    Tensor* y = ctx.OutputTensor(0);
    if (y == nullptr) return ctx.Error("FusedGemm produced no output");
    if (relu_) ReluInPlace(y->mutable_data<float>(), y->num_elements());
    return absl::OkStatus();
  }

 private:
  FusedGemm(std::unique_ptr<OpKernel> gemm, bool relu) : gemm_(std::move(gemm)), relu_(relu) {}
  std::unique_ptr<OpKernel> gemm_;
  bool relu_;
};

}  // namespace

void RegisterFusedGemmKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("FusedGemm").Domain(kOnyxDomain).Build(), MakeFactory<FusedGemm>());
}

}  // namespace onyx
