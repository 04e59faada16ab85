// Registration functions of the math family, one per kernel file.
#pragma once

#include "framework/kernel_registry.h"

namespace onyx {

void RegisterActivationKernels(KernelRegistry& registry);   // activation.cc
void RegisterBinaryKernels(KernelRegistry& registry);       // binary.cc
void RegisterBitwiseKernels(KernelRegistry& registry);      // bitwise.cc
void RegisterCompareKernels(KernelRegistry& registry);      // compare.cc
void RegisterCumSumKernels(KernelRegistry& registry);       // cumsum.cc
void RegisterDetKernels(KernelRegistry& registry);          // det.cc
void RegisterEinsumKernels(KernelRegistry& registry);       // einsum.cc
void RegisterElementwiseKernels(KernelRegistry& registry);  // elementwise.cc
void RegisterGelu20Kernels(KernelRegistry& registry);       // gelu.cc
void RegisterGemmKernels(KernelRegistry& registry);         // gemm.cc
void RegisterMatMulKernels(KernelRegistry& registry);       // matmul.cc
void RegisterQuantMatMulKernels(KernelRegistry& registry);  // quant_matmul.cc
void RegisterReduceKernels(KernelRegistry& registry);       // reduce.cc
void RegisterSignalKernels(KernelRegistry& registry);       // signal.cc
void RegisterSoftmaxKernels(KernelRegistry& registry);      // softmax.cc
void RegisterUnaryKernels(KernelRegistry& registry);        // unary.cc
void RegisterVariadicKernels(KernelRegistry& registry);     // variadic.cc

}  // namespace onyx
