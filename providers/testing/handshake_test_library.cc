// Provider libraries that fail the loader's handshake, one way each, chosen by
// ONYX_HANDSHAKE_KIND_<kind> (providers/testing/CMakeLists.txt), for
// engine/session/provider_loader_test.cc:
//   badabi      an ABI version this onyx does not speak
//   badbuild    a build id of another build
//   noentry     no entry point at all
//   unresolved  needs a symbol no executable defines (the dynamic loader refuses it)
//   misnamed    registers a provider name other than its file's
#include "framework/provider_library.h"

namespace onyx {
namespace {

absl::StatusOr<std::unique_ptr<IExecutionProvider>> CreateNothing(const ProviderOptions&) {
  return absl::InternalError("a handshake test library creates no provider");
}

}  // namespace
}  // namespace onyx

#define ONYX_EXPORT extern "C" __attribute__((visibility("default")))

#if defined(ONYX_HANDSHAKE_KIND_badabi)
ONYX_EXPORT const OnyxProviderLibrary* OnyxProviderLibraryEntry() {
  static const OnyxProviderLibrary library{onyx::kProviderAbiVersion + 1000, ONYX_BUILD_ID, "badabi",
                                           &onyx::CreateNothing};
  return &library;
}
#elif defined(ONYX_HANDSHAKE_KIND_badbuild)
ONYX_EXPORT const OnyxProviderLibrary* OnyxProviderLibraryEntry() {
  static const OnyxProviderLibrary library{onyx::kProviderAbiVersion, "0.0.0-another-build", "badbuild",
                                           &onyx::CreateNothing};
  return &library;
}
#elif defined(ONYX_HANDSHAKE_KIND_noentry)
ONYX_EXPORT int OnyxSomethingElse() { return 1; }
#elif defined(ONYX_HANDSHAKE_KIND_unresolved)
extern "C" int onyx_symbol_no_binary_defines();
ONYX_EXPORT int OnyxUsesAMissingSymbol() { return onyx_symbol_no_binary_defines(); }
ONYX_PROVIDER_LIBRARY("unresolved", onyx::CreateNothing)
#elif defined(ONYX_HANDSHAKE_KIND_misnamed)
ONYX_PROVIDER_LIBRARY("someone_else", onyx::CreateNothing)
#else
#error "define one ONYX_HANDSHAKE_KIND_<kind>"
#endif
