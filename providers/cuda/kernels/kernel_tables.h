// The CUDA provider's kernel tables, one per op family, and each family's
// creation-time checks. RegisterCudaKernels (cuda_kernels.cc) calls every
// Register*; CudaNodeSupported calls every Check*.
//
// A Check* function returns OK for nodes of other families, and for its own
// nodes the same error the kernel's factory would return for reasons known
// before any run (a shape-like input that is not a constant initializer, an
// attribute value the kernel does not implement), so that the provider can
// decline such nodes instead of failing session creation.
#pragma once

#include "absl/status/status.h"
#include "framework/kernel_registry.h"
#include "framework/op_kernel.h"

namespace onyx::cuda_ops {

void RegisterElementwiseKernels(KernelRegistry& registry);      // elementwise.cc: unary, binary, Clip, Gelu
void RegisterReduceKernels(KernelRegistry& registry);           // reduce.cc
void RegisterSoftmaxKernels(KernelRegistry& registry);          // softmax.cc
void RegisterLayerNormKernels(KernelRegistry& registry);        // layer_norm.cc
void RegisterPoolKernels(KernelRegistry& registry);             // pool.cc
void RegisterConvKernels(KernelRegistry& registry);             // conv.cc: Conv, FusedConv
void RegisterMatMulKernels(KernelRegistry& registry);           // matmul.cc: MatMul, Gemm, FusedMatMul, FusedGemm
void RegisterTransposeKernels(KernelRegistry& registry);        // transpose.cc
void RegisterConcatSplitKernels(KernelRegistry& registry);      // concat_split.cc
void RegisterSliceKernels(KernelRegistry& registry);            // slice.cc
void RegisterGatherKernels(KernelRegistry& registry);           // gather.cc
void RegisterResizeKernels(KernelRegistry& registry);           // resize.cc: Resize, Upsample
void RegisterCastWhereExpandKernels(KernelRegistry& registry);  // cast_where_expand.cc
void RegisterShapeKernels(KernelRegistry& registry);  // shape_ops.cc: Reshape, Flatten, (Un)Squeeze, Identity, Shape

absl::Status CheckElementwiseNode(const OpKernelInfo& info);
absl::Status CheckReduceNode(const OpKernelInfo& info);
absl::Status CheckPoolNode(const OpKernelInfo& info);
absl::Status CheckConvNode(const OpKernelInfo& info);
absl::Status CheckMatMulNode(const OpKernelInfo& info);
absl::Status CheckConcatSplitNode(const OpKernelInfo& info);
absl::Status CheckSliceNode(const OpKernelInfo& info);
absl::Status CheckResizeNode(const OpKernelInfo& info);
absl::Status CheckCastWhereExpandNode(const OpKernelInfo& info);
absl::Status CheckShapeNode(const OpKernelInfo& info);
absl::Status CheckNormalizationNode(const OpKernelInfo& info);  // layer_norm.cc

}  // namespace onyx::cuda_ops
