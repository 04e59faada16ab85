#include "session/provider_registry.h"

namespace onyx {

ProviderRegistry& GlobalProviderRegistry() {
  static ProviderRegistry* registry = [] {
    auto* r = new ProviderRegistry();
    RegisterBuiltinProviders(*r);
    return r;
  }();
  return *registry;
}

}  // namespace onyx
