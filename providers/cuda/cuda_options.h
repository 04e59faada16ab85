// The CUDA provider's options, from SessionOptions::providers
// ("cuda:device_id=1;tf32=1;cuda_graph=1;gpu_mem_limit=8589934592").
#pragma once

#include <cstddef>

#include "absl/status/statusor.h"
#include "framework/execution_provider.h"

namespace onyx {

struct CudaProviderOptions {
  int device_id = 0;         // CUDA device ordinal
  bool tf32 = false;         // let float GEMMs and convolutions use TF32 tensor cores
  bool cuda_graph = false;   // capture the lane's work as a CUDA graph once warm
  size_t gpu_mem_limit = 0;  // cap on the device arena's reserved bytes; 0 = none
};

// Parses `options.settings`. INVALID_ARGUMENT for an unknown key (naming it
// and the known ones) or a bad value (naming the option, what it expects and
// what it received). Whether device_id exists is checked by the provider.
absl::StatusOr<CudaProviderOptions> ParseCudaProviderOptions(const ProviderOptions& options);

}  // namespace onyx
