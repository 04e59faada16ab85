// The providers built into this binary, registered by name in one place.
// onyx_runtime compiles this file as it is; onyx_runtime_testing compiles it
// with ONYX_WITH_TEST_PROVIDER, which makes the build tree's provider folder
// (ONYX_TEST_PROVIDER_DIR) a place to load provider libraries from, the
// test-only "test" provider among them. Providers built as libraries (cuda)
// are not listed here: the session layer loads them by name on demand.
#include "providers/cpu/cpu_provider.h"
#include "session/provider_loader.h"
#include "session/provider_registry.h"

namespace onyx {

void RegisterBuiltinProviders(ProviderRegistry& registry) {
  registry.Register("cpu", CreateCpuExecutionProvider);
#if ONYX_WITH_TEST_PROVIDER
  AddProviderSearchDirectory(ONYX_TEST_PROVIDER_DIR);
#endif
}

}  // namespace onyx
