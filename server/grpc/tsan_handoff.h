// Happens-before edges that gRPC's callback API guarantees and
// ThreadSanitizer cannot see, Debian's gRPC core not being instrumented: an
// operation a reactor starts (StartRead, StartWrite, Finish) happens before
// the callback that reports its completion, and every callback returns before
// OnDone. A reactor hands a buffer to gRPC before starting the operation and
// takes it back first thing in the callback. No-ops outside TSan builds
// (scripts/sanitize.sh thread).
#pragma once

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ONYX_TSAN_HANDOFF 1
#endif
#endif

#ifdef ONYX_TSAN_HANDOFF
#include <sanitizer/tsan_interface.h>
#endif

namespace onyx::server {

inline void HandOffToGrpc(const void* what) {
#ifdef ONYX_TSAN_HANDOFF
  __tsan_release(const_cast<void*>(what));
#endif
}

inline void TakeBackFromGrpc(const void* what) {
#ifdef ONYX_TSAN_HANDOFF
  __tsan_acquire(const_cast<void*>(what));
#endif
}

}  // namespace onyx::server
