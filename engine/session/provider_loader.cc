#include "session/provider_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"

namespace onyx {
namespace {

struct Cache {
  absl::Mutex mu;
  // By canonical path; a library stays loaded for the life of the process.
  std::map<std::string, std::unique_ptr<ProviderLibrary>> by_path ABSL_GUARDED_BY(mu);
  std::map<std::string, const ProviderLibrary*> by_name ABSL_GUARDED_BY(mu);
  std::vector<std::string> extra_dirs ABSL_GUARDED_BY(mu);
};

Cache& GetCache() {
  static Cache* cache = new Cache();
  return *cache;
}

std::string ExecutableDirectory() {
  std::error_code error;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string() : exe.parent_path().string();
}

bool ValidProviderName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// Opens, handshakes and caches `path` (canonical). Caller holds the cache lock.
absl::StatusOr<const ProviderLibrary*> LoadLocked(Cache& cache, const std::string& path,
                                                  const std::string& expected_name)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(cache.mu) {
  auto cached = cache.by_path.find(path);
  if (cached == cache.by_path.end()) {
    const std::string what = absl::StrCat("provider library ", path);
    // RTLD_NOW: an unresolved symbol is this call's error, not a crash later.
    // RTLD_LOCAL: the library's own dependencies stay out of the global scope.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      return absl::FailedPreconditionError(
          absl::StrCat("cannot load ", what, ": ", error != nullptr ? error : "unknown dlopen error"));
    }
    auto entry = reinterpret_cast<OnyxProviderLibraryEntryFn>(dlsym(handle, kProviderEntrySymbol));
    if (entry == nullptr) {
      dlclose(handle);
      return absl::FailedPreconditionError(
          absl::StrCat(what, " is not an onyx provider library: it has no ", kProviderEntrySymbol, " symbol"));
    }
    const OnyxProviderLibrary* info = entry();
    if (info == nullptr) {
      dlclose(handle);
      return absl::FailedPreconditionError(absl::StrCat(what, ": ", kProviderEntrySymbol, " returned nothing"));
    }
    // Only the first two fields are read before they are known to match.
    if (info->abi_version != kProviderAbiVersion) {
      const uint32_t version = info->abi_version;
      dlclose(handle);
      return absl::FailedPreconditionError(absl::StrCat(what, " has provider ABI version ", version,
                                                        "; this onyx expects version ", kProviderAbiVersion));
    }
    const std::string build_id = info->build_id != nullptr ? info->build_id : "";
    if (build_id != ONYX_BUILD_ID) {
      dlclose(handle);
      return absl::FailedPreconditionError(
          absl::StrCat(what, " comes from build '", build_id, "'; this onyx is build '", ONYX_BUILD_ID,
                       "': a provider library must be built together with the binary that loads it"));
    }
    if (info->name == nullptr || info->create == nullptr) {
      dlclose(handle);
      return absl::FailedPreconditionError(absl::StrCat(what, " declares no provider name or factory"));
    }
    auto library = std::make_unique<ProviderLibrary>();
    library->name = info->name;
    library->path = path;
    library->build_id = build_id;
    library->create = info->create;
    library->handle = handle;
    cached = cache.by_path.emplace(path, std::move(library)).first;
  }
  const ProviderLibrary* library = cached->second.get();
  if (!expected_name.empty() && library->name != expected_name) {
    return absl::FailedPreconditionError(absl::StrCat("provider library ", path, " registers provider '", library->name,
                                                      "', expected '", expected_name, "'"));
  }
  cache.by_name.emplace(library->name, library);
  return library;
}

std::vector<std::string> SearchDirectoriesLocked(Cache& cache) ABSL_EXCLUSIVE_LOCKS_REQUIRED(cache.mu) {
  std::vector<std::string> dirs;
  if (std::string exe = ExecutableDirectory(); !exe.empty()) dirs.push_back(exe);
  if (const char* path = std::getenv("ONYX_PROVIDER_PATH"); path != nullptr) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) dirs.emplace_back(dir);
  }
  dirs.insert(dirs.end(), cache.extra_dirs.begin(), cache.extra_dirs.end());
  return dirs;
}

}  // namespace

std::string ProviderLibraryFileName(const std::string& name) { return absl::StrCat("libonyx_provider_", name, ".so"); }

absl::StatusOr<const ProviderLibrary*> LoadProviderLibrary(const std::string& name) {
  if (!ValidProviderName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("execution provider name '", name, "': expected lowercase letters, digits and '_'"));
  }
  Cache& cache = GetCache();
  absl::MutexLock lock(&cache.mu);
  if (auto it = cache.by_name.find(name); it != cache.by_name.end()) return it->second;
  const std::string file = ProviderLibraryFileName(name);
  const std::vector<std::string> dirs = SearchDirectoriesLocked(cache);
  for (const std::string& dir : dirs) {
    std::error_code error;
    std::filesystem::path candidate = std::filesystem::path(dir) / file;
    if (!std::filesystem::exists(candidate, error)) continue;
    std::filesystem::path canonical = std::filesystem::canonical(candidate, error);
    return LoadLocked(cache, error ? candidate.string() : canonical.string(), name);
  }
  return absl::NotFoundError(absl::StrCat(
      "execution provider '", name, "' is not built in and no ", file, " was found (searched: ",
      dirs.empty() ? std::string("nothing") : absl::StrJoin(dirs, ", "), "; ONYX_PROVIDER_PATH adds folders)"));
}

absl::StatusOr<const ProviderLibrary*> LoadProviderLibraryFile(const std::string& path,
                                                               const std::string& expected_name) {
  std::error_code error;
  std::filesystem::path canonical = std::filesystem::canonical(path, error);
  if (error) {
    return absl::NotFoundError(absl::StrCat("provider library ", path, ": ", error.message()));
  }
  Cache& cache = GetCache();
  absl::MutexLock lock(&cache.mu);
  return LoadLocked(cache, canonical.string(), expected_name);
}

void AddProviderSearchDirectory(const std::string& dir) {
  Cache& cache = GetCache();
  absl::MutexLock lock(&cache.mu);
  for (const std::string& d : cache.extra_dirs) {
    if (d == dir) return;
  }
  cache.extra_dirs.push_back(dir);
}

std::vector<std::string> ProviderSearchDirectories() {
  Cache& cache = GetCache();
  absl::MutexLock lock(&cache.mu);
  return SearchDirectoriesLocked(cache);
}

}  // namespace onyx
