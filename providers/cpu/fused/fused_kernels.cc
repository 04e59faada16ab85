#include "providers/cpu/fused/fused_kernels.h"

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

void ReluInPlace(float* data, int64_t n) {
  ParallelFor(n, 16384, [data](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) data[i] = data[i] < 0.f ? 0.f : data[i];
  });
}

}  // namespace onyx
