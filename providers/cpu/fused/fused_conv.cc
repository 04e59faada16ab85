// com.onyx FusedConv(X, W, B?, Z?): Conv, then + Z (same shape), then the
// activation ("Relu"), applied in place on the convolution's output.
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "onyx/status_macros.h"
#include "partition/partitioner.h"
#include "providers/cpu/fused/fused_kernels.h"

namespace onyx {
namespace {

class FusedConv final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(bool relu, ParseReluActivation(info));
    // The convolution itself is the CPU provider's Conv kernel (it ignores the
    // extra Z input).
    ASSIGN_OR_RETURN(auto conv, CreateWrappedCpuKernel(info, "Conv"));
    return std::unique_ptr<OpKernel>(new FusedConv(std::move(conv), relu));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(RequireFloatInput(ctx, "FusedConv"));
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
    const bool relu = relu_;
    ParallelFor(y->num_elements(), 16384, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        float v = pz ? py[i] + pz[i] : py[i];
        py[i] = relu && v < 0.f ? 0.f : v;
      }
    });
    return absl::OkStatus();
  }

 private:
  FusedConv(std::unique_ptr<OpKernel> conv, bool relu) : conv_(std::move(conv)), relu_(relu) {}
  std::unique_ptr<OpKernel> conv_;
  bool relu_;
};

}  // namespace

void RegisterFusedConvKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("FusedConv").Domain(kOnyxDomain).Build(), MakeFactory<FusedConv>());
}

}  // namespace onyx
