#include "providers/cpu/llm/llm_kernels.h"

#include "providers/cpu/kernel_tables.h"

namespace onyx {

void RegisterLlmKernels(KernelRegistry& r) {
  RegisterAttentionKernels(r);
  RegisterRmsNormalizationKernels(r);
  RegisterRotaryEmbeddingKernels(r);
}

}  // namespace onyx
