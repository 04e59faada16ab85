// Kernels for the com.onyx operators that the graph optimizer's fusions emit.
// Their contracts are documented in engine/optimizer/README.md.
#pragma once

#include <cstdint>

#include "framework/kernel_registry.h"
#include "framework/op_kernel.h"

namespace onyx {

void RegisterFusedConvKernels(KernelRegistry& registry);    // fused_conv.cc
void RegisterFusedGemmKernels(KernelRegistry& registry);    // fused_gemm.cc
void RegisterFusedMatMulKernels(KernelRegistry& registry);  // fused_matmul.cc
void RegisterGeluKernels(KernelRegistry& registry);         // gelu.cc
void RegisterLayerNormKernels(KernelRegistry& registry);    // layer_norm.cc

// The `activation` attribute of a fused product: true for "Relu", false when
// absent; any other value is an error naming the node.
absl::StatusOr<bool> ParseReluActivation(const OpKernelInfo& info);

// data[i] = max(data[i], 0) over n floats.
void ReluInPlace(float* data, int64_t n);

}  // namespace onyx
