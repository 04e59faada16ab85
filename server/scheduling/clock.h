// Clock: the batcher's source of time, injected so tests control it.
//
//   std::shared_ptr<Clock> clock = RealClock::Shared();      // production
//   absl::Time now = clock->Now();
//   clock->AwaitWithDeadline(&mu, absl::Condition(&ready), now + absl::Microseconds(200));
//
// Tests use testing::FakeClock (test_util.h), whose time moves only when the
// test advances it; a wait on it ends as soon as the condition holds or the
// fake time reaches the deadline, so batching and timeout behaviour do not
// depend on how fast the machine is.
// Implementations are thread-safe.
#pragma once

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace onyx::server {

class Clock {
 public:
  virtual ~Clock() = default;

  virtual absl::Time Now() const = 0;

  // With `mu` held, waits (releasing `mu` meanwhile) until `condition` holds or
  // Now() >= deadline; returns with `mu` held and whether `condition` holds.
  // `condition` is evaluated with `mu` held, as absl::Mutex::Await does.
  virtual bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& condition,
                                 absl::Time deadline) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) = 0;
};

// absl::Now() and absl::Mutex::AwaitWithDeadline.
class RealClock final : public Clock {
 public:
  // One process-wide instance.
  static std::shared_ptr<Clock> Shared();

  absl::Time Now() const override { return absl::Now(); }
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& condition,
                         absl::Time deadline) const override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    return mu->AwaitWithDeadline(condition, deadline);
  }
};

inline std::shared_ptr<Clock> RealClock::Shared() {
  static const auto* const clock = new std::shared_ptr<Clock>(std::make_shared<RealClock>());
  return *clock;
}

}  // namespace onyx::server
