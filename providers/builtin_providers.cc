// The providers built into this binary, registered by name in one place.
// onyx_runtime compiles this file as it is; onyx_runtime_testing compiles it
// with ONYX_WITH_TEST_PROVIDER, adding the test-only "test" provider.
#include "providers/cpu/cpu_provider.h"
#include "session/provider_registry.h"
#if ONYX_WITH_TEST_PROVIDER
#include "providers/testing/test_provider.h"
#endif

namespace onyx {

void RegisterBuiltinProviders(ProviderRegistry& registry) {
  registry.Register("cpu", CreateCpuExecutionProvider);
#if ONYX_WITH_TEST_PROVIDER
  registry.Register("test", CreateTestExecutionProvider);
#endif
}

}  // namespace onyx
