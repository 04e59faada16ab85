#include "providers/cpu/kernel_tables.h"

namespace onyx {

void RegisterCpuKernels(KernelRegistry& registry) {
  RegisterMathKernels(registry);
  RegisterNnKernels(registry);
  RegisterTensorKernels(registry);
  RegisterControlFlowKernels(registry);
  RegisterFusedKernels(registry);
  RegisterNhwcKernels(registry);
  RegisterLlmKernels(registry);
  RegisterContribKernels(registry);
  RegisterMlKernels(registry);
}

}  // namespace onyx
