#include "server/models/heap_release.h"

#include <algorithm>
#include <cstdlib>  // defines __GLIBC__ where it applies

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace onyx::server {

bool ReleaseFreedHeap() {
#if defined(__GLIBC__)
  return malloc_trim(0) != 0;
#else
  return false;
#endif
}

size_t HeapFreeBytes() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  return mallinfo2().fordblks;
#else
  return 0;
#endif
}

bool HeapReleaseThrottle::MaybeRelease() {
  absl::MutexLock lock(&mu_);
  const size_t free_now = HeapFreeBytes();
  free_low_ = std::min(free_low_, free_now);
  const absl::Time now = absl::Now();
  if (free_now - free_low_ < min_freed_ || now - last_ < min_interval_) return false;
  ReleaseFreedHeap();
  last_ = now;
  // Released chunks stay free (not resident): growth is counted from here.
  free_low_ = HeapFreeBytes();
  return true;
}

}  // namespace onyx::server
