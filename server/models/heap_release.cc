#include "server/models/heap_release.h"

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

bool HeapReleaseThrottle::MaybeRelease() {
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = absl::Now();
    if (now - last_ < min_interval_) return false;
    last_ = now;
  }
  ReleaseFreedHeap();
  return true;
}

}  // namespace onyx::server
