#include "providers/cpu/cpu_provider.h"

#include "absl/strings/str_cat.h"
#include "providers/cpu/kernel_tables.h"

namespace onyx {

const KernelRegistry& CpuKernelRegistry() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    RegisterCpuKernels(*r);
    return r;
  }();
  return *registry;
}

const KernelRegistry& CpuExecutionProvider::kernel_registry() const { return CpuKernelRegistry(); }

absl::StatusOr<std::unique_ptr<IExecutionProvider>> CreateCpuExecutionProvider(const ProviderOptions& options) {
  if (!options.settings.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("provider 'cpu' takes no options, received '", options.settings.begin()->first, "'"));
  }
  return std::unique_ptr<IExecutionProvider>(new CpuExecutionProvider());
}

}  // namespace onyx
