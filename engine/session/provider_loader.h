// Provider libraries: execution providers built as shared libraries
// (libonyx_provider_<name>.so) and loaded on first use, so that a binary
// carries no dependency of theirs (a CPU-only host never needs CUDA).
//
//   ASSIGN_OR_RETURN(const ProviderLibrary* lib, LoadProviderLibrary("cuda"));
//   ASSIGN_OR_RETURN(auto provider, lib->create(options));
//
// Where a library is looked for, in order: the folder of the running
// executable, each folder of the ONYX_PROVIDER_PATH environment variable
// (colon-separated), then folders added with AddProviderSearchDirectory. The
// handshake (framework/provider_library.h) must match: same ABI version, same
// build id, the provider name asked for. Loaded libraries are cached for the
// life of the process and never unloaded (their kernels and types outlive any
// one session). Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/provider_library.h"

namespace onyx {

struct ProviderLibrary {
  std::string name;      // the provider it registers
  std::string path;      // the file it was loaded from
  std::string build_id;  // equal to ONYX_BUILD_ID
  ProviderCreateFn create = nullptr;
  void* handle = nullptr;  // dlopen handle
};

// The library of provider `name` (lowercase letters, digits and '_';
// INVALID_ARGUMENT otherwise), loaded once. NOT_FOUND naming the file and
// every folder searched when none has it. FAILED_PRECONDITION naming the path
// when a file was found but cannot be used: the dynamic loader's error (a
// missing dependency such as libcudart), no entry point, or an ABI version,
// build id or provider name other than this binary's (expected vs received).
absl::StatusOr<const ProviderLibrary*> LoadProviderLibrary(const std::string& name);

// The library at `path`, whatever its file name, with the same checks;
// `expected_name` empty accepts any provider name.
absl::StatusOr<const ProviderLibrary*> LoadProviderLibraryFile(const std::string& path,
                                                               const std::string& expected_name = "");

// Adds a folder searched after ONYX_PROVIDER_PATH (e.g. the build tree's
// provider folder, for tests).
void AddProviderSearchDirectory(const std::string& dir);

// The folders LoadProviderLibrary searches now, in order.
std::vector<std::string> ProviderSearchDirectories();

// "libonyx_provider_<name>.so".
std::string ProviderLibraryFileName(const std::string& name);

}  // namespace onyx
