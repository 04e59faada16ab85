// Gelu-20: approximate = none, 0.5 * x * (1 + erf(x / sqrt(2))), or tanh,
// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))). float (and
// float16/bfloat16 through float) runs on oneDNN's vectorised gelu_erf /
// gelu_tanh, as com.onyx Gelu does; double is computed in double.
#include <cmath>

#include "onyx/status_macros.h"
#include "providers/cpu/math/element_util.h"
#include "providers/cpu/math/math_kernels.h"
#include "providers/cpu/math/unary_kernel.h"
#include "providers/cpu/nn/dnnl_support.h"

namespace onyx {
namespace {

class Gelu final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    const std::string approximate = info.AttrOr<std::string>("approximate", "none");
    if (approximate != "none" && approximate != "tanh") {
      return info.Error("attribute 'approximate' must be none or tanh, received '" + approximate + "'");
    }
    return std::unique_ptr<OpKernel>(new Gelu(approximate == "tanh"));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    ASSIGN_OR_RETURN(const Tensor* x, RequireInput(ctx, 0, "X"));
    ASSIGN_OR_RETURN(Tensor* y, ctx.Output(0, x->dims(), x->type()));
    const int64_t n = x->num_elements();
    if (x->type() == DataType::kDouble) {
      const double* px = x->data<double>();
      double* py = y->mutable_data<double>();
      MapElements(px, py, n, [this](double v) {
        if (tanh_) return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
        return 0.5 * v * (1 + std::erf(v * M_SQRT1_2));
      });
      return absl::OkStatus();
    }
    const bool half = IsHalfLike(x->type());
    if (!half && x->type() != DataType::kFloat) return ctx.Error("Gelu computes float types only");
    Tensor xf = UpcastToFloat(*x);
    Tensor yf = half ? Tensor::Allocate(DataType::kFloat, x->dims()) : *y;
    absl::Status status = DnnlEltwise(tanh_ ? dnnl::algorithm::eltwise_gelu_tanh : dnnl::algorithm::eltwise_gelu_erf,
                                      0.f, 0.f, xf.data<float>(), yf.mutable_data<float>(), n);
    if (!status.ok()) return ctx.Error(status.message());
    if (half) DowncastFromFloat(yf, *y);
    return absl::OkStatus();
  }

 private:
  explicit Gelu(bool tanh) : tanh_(tanh) {}

  bool tanh_;
};

}  // namespace

void RegisterGelu20Kernels(KernelRegistry& r) {
  r.Register(KernelDefBuilder("Gelu").Since(20).Types("T", kFloatTypes).MayInplace(0, 0).Build(), MakeFactory<Gelu>());
}

}  // namespace onyx
