#include "providers/cpu/fused/fused_kernels.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/parallel_for.h"
#include "providers/cpu/cpu_provider.h"
#include "providers/cpu/kernel_tables.h"

namespace onyx {

void RegisterFusedKernels(KernelRegistry& r) {
  RegisterFusedConvKernels(r);
  RegisterFusedGemmKernels(r);
  RegisterFusedMatMulKernels(r);
  RegisterGeluKernels(r);
  RegisterLayerNormKernels(r);
  RegisterTransposedMatMulKernels(r);
  RegisterMaskedSoftmaxKernels(r);
  RegisterConcatScaleShiftKernels(r);
}

absl::StatusOr<bool> ParseReluActivation(const OpKernelInfo& info) {
  const std::string activation = info.AttrOr<std::string>("activation", "");
  if (activation.empty()) return false;
  if (activation == "Relu") return true;
  return info.Error("unsupported activation '" + activation + "' (supported: Relu)");
}

absl::StatusOr<std::unique_ptr<OpKernel>> CreateWrappedCpuKernel(const OpKernelInfo& info, const char* op_type) {
  auto entries = CpuKernelRegistry().Entries("", op_type);
  if (entries.empty()) return info.Error(absl::StrCat("no CPU ", op_type, " kernel to fuse with"));
  return entries.back()->factory(info);
}

absl::Status RequireFloatInput(OpKernelContext& ctx, const char* op) {
  const Tensor* x = ctx.Input(0);
  if (x == nullptr) return ctx.Error(absl::StrCat(op, " needs input 0"));
  if (x->type() != DataType::kFloat) {
    return ctx.Error(absl::StrCat(op, " computes float only, received ", DataTypeName(x->type())));
  }
  return absl::OkStatus();
}

absl::StatusOr<ConvActivation> ParseFusedActivation(const OpKernelInfo& info) {
  using K = ConvActivation::Kind;
  const std::string name = info.AttrOr<std::string>("activation", "");
  auto kind = ParseConvActivation(name);
  if (!kind.ok()) return info.Error(kind.status().message());
  const std::vector<float> params = info.AttrOr<std::vector<float>>("activation_params", {});
  size_t expected = 0;
  switch (*kind) {
    case K::kNone:
    case K::kRelu:
    case K::kSigmoid:
    case K::kHardSwish:
    case K::kTanh: expected = 0; break;
    case K::kLeakyRelu:
    case K::kSwish: expected = 1; break;
    case K::kClip:
    case K::kHardSigmoid: expected = 2; break;
  }
  if (params.size() != expected) {
    return info.Error(
        absl::StrCat("activation '", name, "' takes ", expected, " activation_params, received ", params.size()));
  }
  ConvActivation a;
  a.kind = *kind;
  if (expected > 0) a.alpha = params[0];
  if (expected > 1) a.beta = params[1];
  return a;
}

void ApplyActivation(const ConvActivation& a, float* data, int64_t n) {
  using K = ConvActivation::Kind;
  if (a.kind == K::kNone) return;
  ParallelFor(n, 16384, [&a, data](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float v = data[i];
      switch (a.kind) {
        case K::kNone: break;
        case K::kRelu: data[i] = v < 0.f ? 0.f : v; break;
        case K::kLeakyRelu: data[i] = v < 0.f ? a.alpha * v : v; break;
        case K::kClip: data[i] = std::min(std::max(v, a.alpha), a.beta); break;
        case K::kSigmoid: data[i] = 1.f / (1.f + std::exp(-v)); break;
        case K::kHardSigmoid: data[i] = std::min(1.f, std::max(0.f, a.alpha * v + a.beta)); break;
        case K::kHardSwish: data[i] = v * std::min(1.f, std::max(0.f, v / 6.f + 0.5f)); break;
        case K::kSwish: data[i] = v / (1.f + std::exp(-a.alpha * v)); break;
        case K::kTanh: data[i] = std::tanh(v); break;
      }
    }
  });
}

void ReluInPlace(float* data, int64_t n) {
  ParallelFor(n, 16384, [data](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) data[i] = data[i] < 0.f ? 0.f : data[i];
  });
}

}  // namespace onyx
