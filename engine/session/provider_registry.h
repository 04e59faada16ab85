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

// Registers the providers linked into this binary ("cpu", ...). Defined by
// the runtime library, not by the engine.
void RegisterBuiltinProviders(ProviderRegistry& registry);

}  // namespace onyx
