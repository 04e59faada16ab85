// The provider library's entry point and its factory over the real CUDA
// runtime, the device kernels and the lanes' CUDA library handles.
#include "framework/provider_library.h"
#include "providers/cuda/cuda_lane.h"
#include "providers/cuda/cuda_options.h"
#include "providers/cuda/cuda_provider.h"
#include "providers/cuda/kernels/cuda_kernels.h"

namespace onyx {

absl::StatusOr<std::unique_ptr<IExecutionProvider>> CreateCudaExecutionProvider(const ProviderOptions& options) {
  // Capture eligibility and the capture/replay controller exist
  // (graph_capture.h), but the executor does not run a lane's nodes inside
  // one capture yet: say so rather than run without the graph silently.
  if (auto parsed = ParseCudaProviderOptions(options); parsed.ok() && parsed->cuda_graph) {
    return absl::UnimplementedError(
        "execution provider 'cuda': option cuda_graph=1 is not available yet (the executor does not replay a "
        "captured CUDA graph); leave it out");
  }
  CudaExecutionProvider::Dependencies deps;
  deps.runtime = CreateCudaDeviceRuntime();
  deps.register_kernels = RegisterCudaKernels;
  deps.lane_resources = CreateCudaLaneResources;
  deps.node_supported = CudaNodeSupported;
  absl::StatusOr<std::unique_ptr<CudaExecutionProvider>> provider =
      CudaExecutionProvider::Create(options, std::move(deps));
  if (!provider.ok()) return provider.status();
  return std::unique_ptr<IExecutionProvider>(*std::move(provider));
}

}  // namespace onyx

ONYX_PROVIDER_LIBRARY("cuda", onyx::CreateCudaExecutionProvider)
