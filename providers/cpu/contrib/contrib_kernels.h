// CPU kernels for ONNX Runtime's contrib operators (domain com.microsoft, and
// the default-domain LayerNormalization-1 / SimplifiedLayerNormalization-1),
// which models carry after ONNX Runtime's transformer optimizer or quantizer.
// Each kernel follows ONNX Runtime 1.30's CPU kernel: its formula, its
// defaults, the input forms it accepts; forms ONNX Runtime's CPU kernel
// refuses are refused here too, with an error naming the node and the form.
// Schemas: engine/graph/schemas/contrib_*.cc. Float kernels compute float32
// only (as ONNX Runtime's CPU kernels mostly do); other element types are
// refused at session creation by the kernel definitions' type constraints.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "framework/kernel_registry.h"
#include "framework/op_kernel.h"
#include "onyx/tensor.h"

namespace onyx {

void RegisterContribActivationKernels(KernelRegistry& registry);   // activations.cc
void RegisterContribMatMulKernels(KernelRegistry& registry);       // fused_matmul.cc
void RegisterContribConvGemmKernels(KernelRegistry& registry);     // fused_conv_gemm.cc
void RegisterContribNormKernels(KernelRegistry& registry);         // layer_norm.cc
void RegisterEmbedLayerNormKernels(KernelRegistry& registry);      // embed_layer_norm.cc
void RegisterContribAttentionKernels(KernelRegistry& registry);    // attention.cc
void RegisterMultiHeadAttentionKernels(KernelRegistry& registry);  // multi_head_attention.cc
void RegisterContribQuantMatMulKernels(KernelRegistry& registry);  // quant_matmul.cc
void RegisterQLinearElementwiseKernels(KernelRegistry& registry);  // qlinear_elementwise.cc
void RegisterQLinearConcatKernels(KernelRegistry& registry);       // qlinear_concat.cc
void RegisterQLinearPoolKernels(KernelRegistry& registry);         // qlinear_pool.cc

// The definition of com.microsoft `op` opset 1 with type parameter `param`
// constrained to float.
KernelDef MicrosoftFloatKernel(const char* op, const char* param = "T");

// Input i as a float tensor, or INVALID_ARGUMENT naming `name` and what was
// received (omitted, or another element type).
absl::StatusOr<const Tensor*> FloatInput(const OpKernelContext& ctx, int i, const char* name);

// OK when `t` is 1-D with `n` elements; otherwise INVALID_ARGUMENT naming
// `name`, the expected length and the received shape.
absl::Status RequireVector(const OpKernelContext& ctx, const Tensor& t, const char* name, int64_t n);

}  // namespace onyx
