// RateLimiter: lets one event through per interval, e.g. one arena dump per
// 10 s per model so a storm of RESOURCE_EXHAUSTED runs does not flood the log.
//
//   RateLimiter limiter(absl::Seconds(10));
//   if (limiter.Allow(absl::Now())) spdlog::error("...");
//
// Thread-safe.
#pragma once

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace onyx::server {

class RateLimiter {
 public:
  explicit RateLimiter(absl::Duration interval) : interval_(interval) {}

  // True for the first call, then for the first call at least `interval`
  // after the last one that returned true.
  bool Allow(absl::Time now) {
    absl::MutexLock lock(&mu_);
    if (now - last_ < interval_) return false;
    last_ = now;
    return true;
  }

 private:
  const absl::Duration interval_;
  absl::Mutex mu_;
  absl::Time last_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace onyx::server
