// com.onyx Gelu(X) = 0.5 * x * (1 + erf(x / sqrt(2))), float, by oneDNN's
// vectorised gelu_erf (a scalar erff per element cost about 8 ns: a third of
// ConvNeXt's run). gelu_test.cc bounds its error against double precision.
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/nn/dnnl_support.h"

namespace onyx {
namespace {

class Gelu final : public OpKernel {
 public:
  explicit Gelu(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor& x = *ctx.Input(0);
    if (x.type() != DataType::kFloat) return ctx.Error("Gelu computes float only");
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), x.type()));
    absl::Status status = DnnlEltwise(dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f, x.data<float>(),
                                      y->mutable_data<float>(), x.num_elements());
    return status.ok() ? status : ctx.Error(status.message());
  }
};

}  // namespace

void RegisterGeluKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Gelu").Domain(kOnyxDomain).Build(), MakeFactory<Gelu>());
}

}  // namespace onyx
