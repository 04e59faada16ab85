// The process's provider registry: the providers InferenceSession::Create
// can name in SessionOptions::providers.
//
// The engine never includes a provider. The runtime library an application
// links (onyx_runtime, providers/builtin_providers.cc) defines
// RegisterBuiltinProviders, which registers every provider built into the
// binary explicitly, in one place; it runs once, on first use of the registry.
#pragma once

#include "framework/execution_provider.h"

namespace onyx {

// The registry, filled by RegisterBuiltinProviders on first use. Thread-safe.
ProviderRegistry& GlobalProviderRegistry();

// Creates provider `name`: a built-in one from the registry, otherwise from
// its provider library (session/provider_loader.h), whose factory is then
// registered for later calls. NOT_FOUND names the built-in providers and the
// folders searched; other errors are the library's or the factory's (e.g.
// UNAVAILABLE when the device is missing).
absl::StatusOr<std::unique_ptr<IExecutionProvider>> CreateProvider(const std::string& name,
                                                                   const ProviderOptions& options);

// Registers the providers linked into this binary ("cpu", ...). Defined by
// the runtime library, not by the engine.
void RegisterBuiltinProviders(ProviderRegistry& registry);

}  // namespace onyx
