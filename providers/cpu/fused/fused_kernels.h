// Kernels for the com.onyx operators that the graph optimizer's fusions emit.
// Their contracts are documented in engine/optimizer/README.md.
#pragma once

#include <cstdint>

#include "framework/kernel_registry.h"
#include "framework/op_kernel.h"
#include "providers/cpu/nn/dnnl_conv.h"

namespace onyx {

void RegisterFusedConvKernels(KernelRegistry& registry);         // fused_conv.cc
void RegisterFusedGemmKernels(KernelRegistry& registry);         // fused_gemm.cc
void RegisterFusedMatMulKernels(KernelRegistry& registry);       // fused_matmul.cc
void RegisterGeluKernels(KernelRegistry& registry);              // gelu.cc
void RegisterLayerNormKernels(KernelRegistry& registry);         // layer_norm.cc
void RegisterTransposedMatMulKernels(KernelRegistry& registry);  // transposed_matmul.cc
void RegisterMaskedSoftmaxKernels(KernelRegistry& registry);     // masked_softmax.cc
void RegisterConcatScaleShiftKernels(KernelRegistry& registry);  // concat_scale_shift.cc

// The com.onyx FusedConv kernel, which com.microsoft FusedConv shares (same
// inputs, attributes and formula; providers/cpu/contrib).
KernelFactory FusedConvFactory();

// The `activation` attribute of a fused product: true for "Relu", false when
// absent; any other value is an error naming the node.
absl::StatusOr<bool> ParseReluActivation(const OpKernelInfo& info);

// The CPU provider's kernel for the default-domain `op_type`, built from the
// fused node's attributes (it ignores the ones it does not know, such as
// `activation`): the product a fused kernel wraps.
absl::StatusOr<std::unique_ptr<OpKernel>> CreateWrappedCpuKernel(const OpKernelInfo& info, const char* op_type);

// OK when input 0 is float (the fused activations run on float outputs only);
// else an error naming `op` and the type received, before any work.
absl::Status RequireFloatInput(OpKernelContext& ctx, const char* op);

// The `activation` and `activation_params` attributes of a FusedConv (see
// engine/optimizer/README.md); errors name the node, the value and the
// parameter count expected.
absl::StatusOr<ConvActivation> ParseFusedActivation(const OpKernelInfo& info);

// data[i] = activation(data[i]) over n floats (the reference path's form of
// the oneDNN post-op).
void ApplyActivation(const ConvActivation& activation, float* data, int64_t n);

// data[i] = max(data[i], 0) over n floats.
void ReluInPlace(float* data, int64_t n);

}  // namespace onyx
