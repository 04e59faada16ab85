#include "session/provider_registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "session/provider_loader.h"

namespace onyx {

ProviderRegistry& GlobalProviderRegistry() {
  static ProviderRegistry* registry = [] {
    auto* r = new ProviderRegistry();
    RegisterBuiltinProviders(*r);
    return r;
  }();
  return *registry;
}

absl::StatusOr<std::unique_ptr<IExecutionProvider>> CreateProvider(const std::string& name,
                                                                   const ProviderOptions& options) {
  ProviderRegistry& registry = GlobalProviderRegistry();
  if (!registry.Contains(name)) {
    auto library = LoadProviderLibrary(name);
    if (absl::IsNotFound(library.status())) {
      return absl::NotFoundError(absl::StrCat("unknown execution provider '", name,
                                              "' (built in: ", absl::StrJoin(registry.Names(), ", "), "); ",
                                              library.status().message()));
    }
    if (!library.ok()) return library.status();
    registry.Register(name, (*library)->create);
  }
  return registry.Create(name, options);
}

}  // namespace onyx
