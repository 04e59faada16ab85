// The CPU execution provider: host memory, onyx's own kernels, and oneDNN for
// Conv, MatMul and Gemm. Registered under the name "cpu"
// (providers/builtin_providers.cc); always present as the fallback for nodes
// no other provider takes. Thread-safe.
#pragma once

#include "framework/execution_provider.h"

namespace onyx {

class CpuExecutionProvider final : public IExecutionProvider {
 public:
  const char* name() const override { return "cpu"; }
  const char* device() const override { return "cpu"; }
  const KernelRegistry& kernel_registry() const override;
};

// The provider's factory; it takes no options (INVALID_ARGUMENT naming the
// first one given).
absl::StatusOr<std::unique_ptr<IExecutionProvider>> CreateCpuExecutionProvider(const ProviderOptions& options);

// The registry with every CPU kernel (built once, shared by all sessions).
const KernelRegistry& CpuKernelRegistry();

}  // namespace onyx
