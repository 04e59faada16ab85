// Registration functions of the LLM family (opset 23 transformer ops), one per
// kernel file.
#pragma once

#include "framework/kernel_registry.h"

namespace onyx {

void RegisterAttentionKernels(KernelRegistry& registry);         // attention.cc
void RegisterRmsNormalizationKernels(KernelRegistry& registry);  // rms_norm.cc
void RegisterRotaryEmbeddingKernels(KernelRegistry& registry);   // rotary_embedding.cc

}  // namespace onyx
