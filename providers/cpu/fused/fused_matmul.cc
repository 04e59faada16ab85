// com.onyx FusedMatMul(A, B, bias): A [..., K] x B [K, N] + bias [N], as one
// product over all of A's leading dimensions, then the optional `activation`
// ("Relu" or "Gelu"). With constant float B and bias, oneDNN's matmul runs it
// with B packed once and the bias and activation inside the primitive;
// otherwise one sgemm, then the activation in place.
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/math/dnnl_matmul.h"
#include "providers/cpu/math/gemm_util.h"

namespace onyx {
namespace {

class FusedMatMul final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    auto parsed = DnnlMatMul::ParseActivation(info.AttrOr<std::string>("activation", ""));
    if (!parsed.ok()) return info.Error(parsed.status().message());
    const DnnlMatMul::Activation activation = *parsed;
    std::unique_ptr<DnnlMatMul> dnnl;
    const Tensor* b = info.ConstantInput(1);
    const Tensor* bias = info.ConstantInput(2);
    if (b != nullptr && bias != nullptr && b->type() == DataType::kFloat && b->rank() == 2) {
      auto created = DnnlMatMul::Create(*b, bias, activation, false, DnnlMatMul::RowsHint(info.InputInfo(0)));
      if (!created.ok()) return info.Error(created.status().message());
      dnnl = *std::move(created);
    }
    return std::unique_ptr<OpKernel>(new FusedMatMul(activation, std::move(dnnl)));
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
    ASSIGN_OR_RETURN(Tensor* y, ctx.OutputForOverwrite(0, out_dims, DataType::kFloat));
    float* py = y->mutable_data<float>();
    if (dnnl_ != nullptr && k > 0) {
      absl::Status status = dnnl_->Run(a.data<float>(), rows, py);
      return status.ok() ? status : ctx.Error(status.message());
    }
    const float* pb = bias.data<float>();
    for (int64_t r = 0; r < rows; ++r) std::copy(pb, pb + n, py + r * n);
    Tensor b_bytes = b;
    if (dnnl_ != nullptr) {
      ASSIGN_OR_RETURN(b_bytes, dnnl_->WithBytes(b));
    }
    RETURN_IF_ERROR(Sgemm(false, false, rows, n, k, 1.f, a.data<float>(), k, b_bytes.data<float>(), n, 1.f, py, n));
    absl::Status status = DnnlMatMul::ApplyActivation(activation_, py, y->num_elements());
    return status.ok() ? status : ctx.Error(status.message());
  }

  std::vector<int> PackedConstantInputs() const override {
    return dnnl_ != nullptr ? std::vector<int>{1} : std::vector<int>{};
  }

 private:
  FusedMatMul(DnnlMatMul::Activation activation, std::unique_ptr<DnnlMatMul> dnnl)
      : activation_(activation), dnnl_(std::move(dnnl)) {}
  DnnlMatMul::Activation activation_;
  std::unique_ptr<DnnlMatMul> dnnl_;  // nullptr: B or the bias is computed at run time
};

}  // namespace

void RegisterFusedMatMulKernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("FusedMatMul").Domain(kOnyxDomain).Build(), MakeFactory<FusedMatMul>());
}

}  // namespace onyx
