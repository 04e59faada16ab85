// The handshake between onyx and a provider built as a shared library
// (libonyx_provider_<name>.so, loaded on demand by the session layer's
// provider registry: engine/session/provider_loader.h).
//
// A provider library exports exactly one symbol, the C function
// OnyxProviderLibraryEntry, defined by ONYX_PROVIDER_LIBRARY:
//
//   ONYX_PROVIDER_LIBRARY("cuda", CreateCudaExecutionProvider)
//
// Its kernels are C++ classes of the framework layer (OpKernel, Tensor,
// IExecutionProvider) that cross the library boundary, and the framework's
// symbols are resolved against the executable that loads it: so the library
// and the executable must come from one build. The entry's first two fields
// say which: the loader reads `abi_version` and `build_id`, and only when both
// equal its own does it touch anything else.
#pragma once

#include <cstdint>

#include "framework/execution_provider.h"
#include "onyx/build_id.h"

namespace onyx {

// Raised whenever this struct or the meaning of its fields changes.
inline constexpr uint32_t kProviderAbiVersion = 1;

using ProviderCreateFn = absl::StatusOr<std::unique_ptr<IExecutionProvider>> (*)(const ProviderOptions&);

}  // namespace onyx

extern "C" {

struct OnyxProviderLibrary {
  uint32_t abi_version;  // kProviderAbiVersion of the library's build
  const char* build_id;  // ONYX_BUILD_ID of the library's build
  const char* name;      // the provider name it registers, e.g. "cuda"
  onyx::ProviderCreateFn create;
};

// The exported entry point's type; its name is kProviderEntrySymbol.
typedef const OnyxProviderLibrary* (*OnyxProviderLibraryEntryFn)(void);
}

namespace onyx {
inline constexpr const char* kProviderEntrySymbol = "OnyxProviderLibraryEntry";
}  // namespace onyx

// Defines the library's entry point. Build the library with
// -fvisibility=hidden (onyx_provider_library() in providers/CMakeLists.txt
// does) so that this is its only exported symbol.
#define ONYX_PROVIDER_LIBRARY(provider_name, create_fn)                                                              \
  extern "C" __attribute__((visibility("default"))) const OnyxProviderLibrary* OnyxProviderLibraryEntry() {          \
    static const OnyxProviderLibrary library{::onyx::kProviderAbiVersion, ONYX_BUILD_ID, provider_name, &create_fn}; \
    return &library;                                                                                                 \
  }
