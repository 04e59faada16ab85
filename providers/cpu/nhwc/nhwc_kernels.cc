#include "providers/cpu/nhwc/nhwc_kernels.h"

#include "providers/cpu/kernel_tables.h"

namespace onyx {

void RegisterNhwcKernels(KernelRegistry& r) {
  RegisterNhwcConvKernels(r);
  RegisterNhwcConvTransposeKernels(r);
  RegisterNhwcPoolKernels(r);
  RegisterNhwcChannelShuffleKernels(r);
}

}  // namespace onyx
