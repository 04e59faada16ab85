// com.onyx FusedMatMul(A, B, bias): A [..., K] x B [K, N] + bias [N], as one
// GEMM over all of A's leading dimensions, then the optional `activation`
// ("Relu").
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/math/gemm_util.h"

namespace onyx {
namespace {

class FusedMatMul final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    ASSIGN_OR_RETURN(bool relu, ParseReluActivation(info));
    return std::unique_ptr<OpKernel>(new FusedMatMul(relu));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    const Tensor& a = *ctx.Input(0);
    const Tensor& b = *ctx.Input(1);
    const Tensor& bias = *ctx.Input(2);
    if (a.rank() < 1 || b.rank() != 2 || a.dims().back() != b.dims()[0] || bias.num_elements() != b.dims()[1] ||
        a.type() != DataType::kFloat) {
      return ctx.Error("expects float A [..., K], B [K, N] and bias [N]; received " + DimsToString(a.dims()) + ", " +
                       DimsToString(b.dims()) + ", " + DimsToString(bias.dims()));
    }
    const int64_t k = b.dims()[0], n = b.dims()[1];
    const int64_t rows =
        k == 0 ? NumElements(absl::MakeConstSpan(a.dims()).subspan(0, a.rank() - 1)) : a.num_elements() / k;
    Dims out_dims = a.dims();
    out_dims.back() = n;
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, out_dims, DataType::kFloat));
    float* py = y->mutable_data<float>();
    const float* pb = bias.data<float>();
    for (int64_t r = 0; r < rows; ++r) std::copy(pb, pb + n, py + r * n);
    RETURN_IF_ERROR(Sgemm(false, false, rows, n, k, 1.f, a.data<float>(), k, b.data<float>(), n, 1.f, py, n));
    if (relu_) ReluInPlace(py, y->num_elements());
    return absl::OkStatus();
  }

 private:
  explicit FusedMatMul(bool relu) : relu_(relu) {}
  bool relu_;
};

}  // namespace

void RegisterFusedMatMulKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("FusedMatMul").Domain(kOnyxDomain).Build(), MakeFactory<FusedMatMul>());
}

}  // namespace onyx
