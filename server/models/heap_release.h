// Returns the heap's free pages to the operating system.
//
// A session's graph, kernels and weights are allocated by the loading thread
// and freed by whichever thread drops the last reference; the C library keeps
// such memory in per-thread arenas and only gives back what sits at an arena's
// top. Without a release after unloads, a server that reloads models under
// traffic grows its RSS by what fragmentation strands (about 140 KB per reload
// of a small MLP), although nothing leaks. A release walks every arena and
// holds each arena's lock while it does (up to 63 ms measured with 500 loads
// and unloads from 32 threads), so it runs off the request path and, through
// HeapReleaseThrottle, at most once per interval.
#ifndef ONYX_SERVER_MODELS_HEAP_RELEASE_H_
#define ONYX_SERVER_MODELS_HEAP_RELEASE_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace onyx::server {

// Whether freed pages went back to the system (false where the C library has
// no such call, or none could be released).
bool ReleaseFreedHeap();

// ReleaseFreedHeap at most once per `min_interval`: a burst of reloads gets
// one release, and the first load or unload after the interval gives back
// what the burst freed. Thread-safe.
class HeapReleaseThrottle {
 public:
  explicit HeapReleaseThrottle(absl::Duration min_interval) : min_interval_(min_interval) {}

  // Releases unless one ran less than the interval ago; whether it ran.
  bool MaybeRelease();

 private:
  const absl::Duration min_interval_;
  absl::Mutex mu_;
  absl::Time last_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace onyx::server

#endif  // ONYX_SERVER_MODELS_HEAP_RELEASE_H_
