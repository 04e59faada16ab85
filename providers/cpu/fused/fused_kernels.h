// Kernels for the com.onyx operators that the graph optimizer's fusions emit.
// Their contracts are documented in engine/optimizer/README.md.
#pragma once

#include "framework/kernel_registry.h"

namespace onyx {

void RegisterFusedConvKernels(KernelRegistry& registry);    // fused_conv.cc
void RegisterFusedMatMulKernels(KernelRegistry& registry);  // fused_matmul.cc
void RegisterGeluKernels(KernelRegistry& registry);         // gelu.cc
void RegisterLayerNormKernels(KernelRegistry& registry);    // layer_norm.cc

}  // namespace onyx
