// Each op family registers its CPU kernels in its own table; RegisterCpuKernels
// calls them all. A family folder holds its kernels, a `<family>_kernels.cc`
// with its Register function, and a `sources.cmake` listing its files.
#pragma once

#include "framework/kernel_registry.h"

namespace onyx {

void RegisterMathKernels(KernelRegistry& registry);         // math/math_kernels.cc
void RegisterNnKernels(KernelRegistry& registry);           // nn/nn_kernels.cc
void RegisterTensorKernels(KernelRegistry& registry);       // tensor/tensor_kernels.cc
void RegisterControlFlowKernels(KernelRegistry& registry);  // controlflow/controlflow_kernels.cc
void RegisterFusedKernels(KernelRegistry& registry);        // fused/fused_kernels.cc (com.onyx)
void RegisterNhwcKernels(KernelRegistry& registry);         // nhwc/nhwc_kernels.cc (com.onyx, channels last)
void RegisterLlmKernels(KernelRegistry& registry);          // llm/llm_kernels.cc (opset 23 transformer ops)
void RegisterContribKernels(KernelRegistry& registry);      // contrib/contrib_kernels.cc (com.microsoft)
void RegisterMlKernels(KernelRegistry& registry);           // ml/ml_kernels.cc (ai.onnx.ml)

void RegisterCpuKernels(KernelRegistry& registry);

}  // namespace onyx
