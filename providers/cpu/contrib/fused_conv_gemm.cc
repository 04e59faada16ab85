// com.microsoft FusedConv and FusedGemm.
//
// FusedConv(X, W, B?, Z?) = activation(Conv(X, W, B) + Z) with `activation`
// and `activation_params` as ONNX Runtime's (Relu, Tanh, Sigmoid, LeakyRelu
// [alpha], Clip [min, max], HardSigmoid [alpha, beta]): exactly com.onyx
// FusedConv, whose kernel (oneDNN with the sum and activation as post-ops) it
// shares.
//
// FusedGemm(A, B, C?) = activation(Gemm(A, B, C)) with the activation's
// parameters in activation_alpha / _beta / _gamma, each required where the
// activation has it (ONNX Runtime refuses the node otherwise).
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "framework/op_kernel.h"
#include "graph/op_domains.h"
#include "onyx/status_macros.h"
#include "providers/cpu/contrib/contrib_kernels.h"
#include "providers/cpu/fused/fused_kernels.h"

namespace onyx {
namespace {

struct GemmActivation {
  enum class Kind {
    kRelu,
    kLeakyRelu,
    kSigmoid,
    kTanh,
    kHardSigmoid,
    kElu,
    kSelu,
    kSoftplus,
    kSoftsign,
    kThresholdedRelu,
    kScaledTanh,
    kParametricSoftplus,
    kCelu
  };
  Kind kind = Kind::kRelu;
  float alpha = 0.f, beta = 0.f, gamma = 0.f;

  float operator()(float x) const {
    switch (kind) {
      case Kind::kRelu: return x > 0.f ? x : 0.f;
      case Kind::kLeakyRelu: return x >= 0.f ? x : alpha * x;
      case Kind::kSigmoid: return 1.f / (1.f + std::exp(-x));
      case Kind::kTanh: return std::tanh(x);
      case Kind::kHardSigmoid: return std::max(0.f, std::min(1.f, alpha * x + beta));
      case Kind::kElu: return x >= 0.f ? x : alpha * (std::exp(x) - 1.f);
      case Kind::kSelu: return gamma * (x > 0.f ? x : alpha * (std::exp(x) - 1.f));
      case Kind::kSoftplus: return x > 0.f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
      case Kind::kSoftsign: return x / (1.f + std::fabs(x));
      case Kind::kThresholdedRelu: return x > alpha ? x : 0.f;
      case Kind::kScaledTanh: return alpha * std::tanh(beta * x);
      case Kind::kParametricSoftplus: {
        const float v = beta * x;
        return alpha * (v > 0.f ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)));
      }
      case Kind::kCelu: return std::max(0.f, x) + std::min(0.f, alpha * (std::exp(x / alpha) - 1.f));
    }
    return x;
  }
};

absl::StatusOr<GemmActivation> ParseGemmActivation(const OpKernelInfo& info) {
  using K = GemmActivation::Kind;
  struct Entry {
    const char* name;
    K kind;
    const char* params;  // which of activation_alpha (a), _beta (b), _gamma (g) it requires
  };
  static constexpr Entry kEntries[] = {
      {"Relu", K::kRelu, ""},
      {"LeakyRelu", K::kLeakyRelu, "a"},
      {"Sigmoid", K::kSigmoid, ""},
      {"Tanh", K::kTanh, ""},
      {"HardSigmoid", K::kHardSigmoid, "ab"},
      {"Elu", K::kElu, "a"},
      {"Selu", K::kSelu, "ag"},
      {"Softplus", K::kSoftplus, ""},
      {"Softsign", K::kSoftsign, ""},
      {"ThresholdedRelu", K::kThresholdedRelu, "a"},
      {"ScaledTanh", K::kScaledTanh, "ab"},
      {"ParametricSoftplus", K::kParametricSoftplus, "ab"},
      {"Celu", K::kCelu, "a"},
  };
  const std::string name = info.AttrOr<std::string>("activation", "");
  for (const Entry& e : kEntries) {
    if (name != e.name) continue;
    GemmActivation a;
    a.kind = e.kind;
    for (const char* p = e.params; *p != '\0'; ++p) {
      const char* attr = *p == 'a' ? "activation_alpha" : *p == 'b' ? "activation_beta" : "activation_gamma";
      auto value = info.Attr<float>(attr);
      if (!value.ok()) return info.Error(absl::StrCat("activation ", name, " needs attribute ", attr));
      (*p == 'a' ? a.alpha : *p == 'b' ? a.beta : a.gamma) = *value;
    }
    return a;
  }
  return info.Error(absl::StrCat("unsupported activation '", name,
                                 "' (supported: Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid, Elu, Selu, Softplus, "
                                 "Softsign, ThresholdedRelu, ScaledTanh, ParametricSoftplus, Celu)"));
}

class FusedGemm final : public OpKernel {
 public:
  static absl::StatusOr<std::unique_ptr<OpKernel>> Create(const OpKernelInfo& info) {
    std::optional<GemmActivation> activation;
    if (info.HasAttr("activation")) {
      ASSIGN_OR_RETURN(GemmActivation a, ParseGemmActivation(info));
      activation = a;
    }
    ASSIGN_OR_RETURN(auto gemm, CreateWrappedCpuKernel(info, "Gemm"));
    return std::unique_ptr<OpKernel>(new FusedGemm(std::move(gemm), activation));
  }

  absl::Status Compute(OpKernelContext& ctx) const override {
    RETURN_IF_ERROR(gemm_->Compute(ctx));
    Tensor* y = ctx.OutputTensor(0);
    if (y == nullptr) return ctx.Error("FusedGemm produced no output");
    if (!activation_) return absl::OkStatus();
    float* py = y->mutable_data<float>();
    const GemmActivation a = *activation_;
    ParallelFor(y->num_elements(), 8192, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) py[i] = a(py[i]);
    });
    return absl::OkStatus();
  }

 private:
  FusedGemm(std::unique_ptr<OpKernel> gemm, std::optional<GemmActivation> activation)
      : gemm_(std::move(gemm)), activation_(activation) {}
  std::unique_ptr<OpKernel> gemm_;
  std::optional<GemmActivation> activation_;
};

}  // namespace

void RegisterContribConvGemmKernels(KernelRegistry& r) {
  r.Register(MicrosoftFloatKernel("FusedConv"), FusedConvFactory());
  r.Register(MicrosoftFloatKernel("FusedGemm"), MakeFactory<FusedGemm>());
}

}  // namespace onyx
