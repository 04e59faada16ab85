#include "providers/cuda/kernels/cuda_kernels.h"

#include "onnx/defs/schema.h"
#include "onyx/status_macros.h"
#include "providers/cuda/kernels/kernel_tables.h"

namespace onyx {

void RegisterCudaKernels(KernelRegistry& registry) {
  cuda_ops::RegisterElementwiseKernels(registry);
  cuda_ops::RegisterReduceKernels(registry);
  cuda_ops::RegisterSoftmaxKernels(registry);
  cuda_ops::RegisterLayerNormKernels(registry);
  cuda_ops::RegisterPoolKernels(registry);
  cuda_ops::RegisterConvKernels(registry);
  cuda_ops::RegisterMatMulKernels(registry);
  cuda_ops::RegisterTransposeKernels(registry);
  cuda_ops::RegisterConcatSplitKernels(registry);
  cuda_ops::RegisterSliceKernels(registry);
  cuda_ops::RegisterGatherKernels(registry);
  cuda_ops::RegisterResizeKernels(registry);
  cuda_ops::RegisterCastWhereExpandKernels(registry);
  cuda_ops::RegisterShapeKernels(registry);
}

absl::Status CudaNodeSupported(const Node& node, const Graph& graph) {
  // The schema the kernel factory would see (plan_builder.cc resolves it the same way).
  const onnx::OpSchema* schema = nullptr;
  const int64_t opset = node.since_version > 0 ? node.since_version : graph.OpsetFor(node.domain);
  if (opset > 0) schema = onnx::OpSchemaRegistry::Schema(node.op_type, static_cast<int>(opset), node.domain);
  const OpKernelInfo info(node, graph, schema, /*provider=*/nullptr);
  RETURN_IF_ERROR(cuda_ops::CheckElementwiseNode(info));
  RETURN_IF_ERROR(cuda_ops::CheckReduceNode(info));
  RETURN_IF_ERROR(cuda_ops::CheckNormalizationNode(info));
  RETURN_IF_ERROR(cuda_ops::CheckPoolNode(info));
  RETURN_IF_ERROR(cuda_ops::CheckConvNode(info));
  RETURN_IF_ERROR(cuda_ops::CheckMatMulNode(info));
  RETURN_IF_ERROR(cuda_ops::CheckConcatSplitNode(info));
  RETURN_IF_ERROR(cuda_ops::CheckSliceNode(info));
  RETURN_IF_ERROR(cuda_ops::CheckResizeNode(info));
  RETURN_IF_ERROR(cuda_ops::CheckCastWhereExpandNode(info));
  RETURN_IF_ERROR(cuda_ops::CheckShapeNode(info));
  return absl::OkStatus();
}

}  // namespace onyx
