// com.onyx Gelu(X) = 0.5 * x * (1 + erf(x / sqrt(2))), float.
#include <cmath>

#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"

namespace onyx {
namespace {

class Gelu final : public OpKernel {
 public:
  explicit Gelu(const OpKernelInfo&) {}
  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor& x = *ctx.Input(0);
    if (x.type() != DataType::kFloat) return ctx.Error("Gelu computes float only");
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x.dims(), x.type()));
    const float* px = x.data<float>();
    float* py = y->mutable_data<float>();
    ParallelFor(x.num_elements(), 8192, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) py[i] = 0.5f * px[i] * (1.f + std::erf(px[i] * 0.70710678118654752f));
    });
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterGeluKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Gelu").Domain(kOnyxDomain).Build(), MakeFactory<Gelu>());
}

}  // namespace onyx
