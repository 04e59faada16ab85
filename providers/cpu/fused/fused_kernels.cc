#include "providers/cpu/fused/fused_kernels.h"
#include "providers/cpu/kernel_tables.h"

namespace onyx {

void RegisterFusedKernels(KernelRegistry& r) {
  RegisterFusedConvKernels(r);
  RegisterFusedMatMulKernels(r);
  RegisterGeluKernels(r);
  RegisterLayerNormKernels(r);
}

}  // namespace onyx
