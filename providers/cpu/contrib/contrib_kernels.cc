#include "providers/cpu/contrib/contrib_kernels.h"

#include "absl/strings/str_cat.h"
#include "graph/op_domains.h"
#include "providers/cpu/kernel_tables.h"

namespace onyx {

void RegisterContribKernels(KernelRegistry& r) {
  RegisterContribActivationKernels(r);
  RegisterContribMatMulKernels(r);
  RegisterContribConvGemmKernels(r);
  RegisterContribNormKernels(r);
  RegisterEmbedLayerNormKernels(r);
  RegisterContribAttentionKernels(r);
  RegisterMultiHeadAttentionKernels(r);
  RegisterContribQuantMatMulKernels(r);
  RegisterQLinearElementwiseKernels(r);
  RegisterQLinearConcatKernels(r);
  RegisterQLinearPoolKernels(r);
}

KernelDef MicrosoftFloatKernel(const char* op, const char* param) {
  return KernelDefBuilder(op).Domain(kMicrosoftDomain).Since(1).Types(param, {DataType::kFloat}).Build();
}

absl::StatusOr<const Tensor*> FloatInput(const OpKernelContext& ctx, int i, const char* name) {
  const Tensor* t = ctx.Input(i);
  if (t == nullptr) return ctx.Error(absl::StrCat("input ", i, " (", name, ") is required"));
  if (t->type() != DataType::kFloat) {
    return ctx.Error(absl::StrCat("input ", i, " (", name, ") must be float, received ", DataTypeName(t->type())));
  }
  return t;
}

absl::Status RequireVector(const OpKernelContext& ctx, const Tensor& t, const char* name, int64_t n) {
  if (t.rank() == 1 && t.dims()[0] == n) return absl::OkStatus();
  return ctx.Error(absl::StrCat(name, " must be 1-D with ", n, " elements, received ", DimsToString(t.dims())));
}

}  // namespace onyx
