// The CUDA provider's kernels (float32 and float16 math, every fixed-size
// type for data movement), for the provider's kernel registry.
//
//   KernelRegistry registry;
//   RegisterCudaKernels(registry);
//   ...
//   // In the provider's GetCapability, for each node the registry matches:
//   absl::Status s = CudaNodeSupported(*node, graph);
//   if (!s.ok()) cap.declined[node->index] = std::string(s.message());
//
// Contract with the provider and the engine:
// - Kernels run on the lane's worker thread and enqueue on
//   CurrentCudaLane().stream (providers/cuda/cuda_lane.h) without ever
//   synchronizing; per-run temporaries live in the lane workspace.
// - Outputs are allocated with OpKernelContext::OutputForOverwrite and fully
//   written on the device.
// - Inputs are device tensors, except constant initializers, which the
//   engine passes as host tensors (ConstantInputsOnHost): each kernel reads
//   OpKernelInfo::ConstantInput at creation and uploads it once through
//   UploadConstantInput (cuda_provider.h); shape-like inputs (Reshape shape,
//   Slice starts..., Expand shape, Resize scales and sizes, Squeeze/Unsqueeze/
//   Reduce axes, Split sizes, Clip bounds) must be constant initializers and
//   are read on the host.
#pragma once

#include "absl/status/status.h"
#include "framework/kernel_registry.h"
#include "graph/graph.h"

namespace onyx {

// Registers every CUDA kernel. KernelDef::provider is left for the registry's
// owner to fill in.
void RegisterCudaKernels(KernelRegistry& registry);

// OK when the CUDA kernel registered for `node` can be created; otherwise the
// reason, naming the node (and input or attribute), which its factory would
// also return: a shape-like input that is not a constant initializer, an
// attribute value or a com.onyx input type the kernels do not implement.
// Kernel factory errors fail session creation rather than send the node to
// the CPU, so the provider declines such nodes in GetCapability with this.
// Thread-safe; reads the graph only.
absl::Status CudaNodeSupported(const Node& node, const Graph& graph);

}  // namespace onyx
