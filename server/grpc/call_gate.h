// CallGate: admission and in-flight count for calls that must finish before
// shutdown proceeds (inference, model load/unload).
//
//   if (!gate.Enter()) return Unavailable();   // shutting down
//   ... later, when the call is finished ...
//   gate.Exit();
// Thread-safe.
#pragma once

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace onyx::server {

class CallGate {
 public:
  // False once Close() was called; on true the caller must call Exit() once.
  bool Enter() {
    absl::MutexLock lock(&mu_);
    if (!open_) return false;
    ++in_flight_;
    return true;
  }
  void Exit() {
    absl::MutexLock lock(&mu_);
    --in_flight_;
  }
  // Refuses new calls from now on. Idempotent.
  void Close() {
    absl::MutexLock lock(&mu_);
    open_ = false;
  }
  // Blocks until no call is in flight or `timeout` passes; true when idle.
  bool AwaitIdle(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; };
    return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
  }

 private:
  absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = true;
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace onyx::server
