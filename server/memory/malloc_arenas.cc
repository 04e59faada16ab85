#include "server/memory/malloc_arenas.h"

#include <cstdlib>  // defines __GLIBC__ where it applies
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace onyx::server {
namespace {

bool ArenaLimitFromEnvironment() {
  const char* max = std::getenv("MALLOC_ARENA_MAX");
  if (max != nullptr && *max != '\0') return true;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables != nullptr && std::strstr(tunables, "glibc.malloc.arena_max") != nullptr;
}

}  // namespace

std::optional<int> LimitMallocArenas(int arenas) {
#if defined(__GLIBC__)
  if (arenas < 1 || ArenaLimitFromEnvironment()) return std::nullopt;
  if (mallopt(M_ARENA_MAX, arenas) != 1) return std::nullopt;
  return arenas;
#else
  (void)arenas;
  return std::nullopt;
#endif
}

}  // namespace onyx::server
