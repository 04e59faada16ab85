#include "providers/cpu/cpu_provider.h"

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

ONYX_REGISTER_PROVIDER(cpu, [](const ProviderOptions&) -> absl::StatusOr<std::unique_ptr<IExecutionProvider>> {
  return std::unique_ptr<IExecutionProvider>(new CpuExecutionProvider());
});

}  // namespace onyx
