// Returns large amounts of freed heap to the operating system.
//
// Unloading a big model frees its graph, kernels and weights back into the C
// library's heap, which gives memory to the system only from an arena's top:
// after a model of a million nodes came and went, onyxd stayed at ~300 MB
// resident instead of ~45 MB. A release (malloc_trim) walks every arena and
// holds each one's lock while it hands the free pages back (55-99 ms measured
// after the reliability matrix's model rows), and the pages fault in again on
// the next allocations, so it runs only when much was freed: small reloads are
// left to the arena limit (server/memory/malloc_arenas.h), which reuses what
// they free.
#ifndef ONYX_SERVER_MODELS_HEAP_RELEASE_H_
#define ONYX_SERVER_MODELS_HEAP_RELEASE_H_

#include <cstddef>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace onyx::server {

// Whether freed pages went back to the system (false where the C library has
// no such call, or none could be released).
bool ReleaseFreedHeap();

// Bytes in the heap's free chunks, resident or not (0 where the C library
// does not say).
size_t HeapFreeBytes();

// ReleaseFreedHeap once the heap's free bytes have grown by `min_freed` since
// the last release (measured from their lowest point since, so memory freed
// and reused does not count), and at most once per `min_interval`.
// Thread-safe.
class HeapReleaseThrottle {
 public:
  HeapReleaseThrottle(size_t min_freed, absl::Duration min_interval)
      : min_freed_(min_freed), min_interval_(min_interval) {}

  // Releases when both bounds allow; whether it ran.
  bool MaybeRelease();

 private:
  const size_t min_freed_;
  const absl::Duration min_interval_;
  absl::Mutex mu_;
  absl::Time last_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  size_t free_low_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace onyx::server

#endif  // ONYX_SERVER_MODELS_HEAP_RELEASE_H_
