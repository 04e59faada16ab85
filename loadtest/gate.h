// Gate: the --max-inflight ceiling of an open loop. A request over the
// ceiling waits in a FIFO inside the client (keeping its intended send time,
// so the wait counts in its response time) or, with --overflow drop, is
// dropped and counted.
//
//   switch (gate.Admit(p)) { case Gate::kSend: Send(p); ... }
//   // on each completion:
//   if (gate.Release(&next)) Send(next);   // the freed slot passes to the oldest waiter
//
// Admission and release happen under one lock so that a request can never be
// left waiting while a slot is free. Thread-safe.
#pragma once

#include <cstdint>
#include <deque>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace onyx::load {

// A request the schedule asked for.
struct Pending {
  int64_t intended_ns = 0;
  int level = -1;  // global level index; -1 = not measured
  int model = 0;
  int variant = 0;
};

class Gate {
 public:
  enum Admission { kSend, kQueued, kDropped };
  Gate(int64_t limit, bool drop) : limit_(limit), drop_(drop) {}

  Admission Admit(const Pending& p) {
    absl::MutexLock lock(&mu_);
    if (inflight_ < limit_) {
      ++inflight_;
      return kSend;
    }
    if (drop_) return kDropped;
    waiting_.push_back(p);
    return kQueued;
  }
  // A request finished: true with the next waiter in *next (its slot is
  // taken over), false when the slot was freed.
  bool Release(Pending* next) {
    absl::MutexLock lock(&mu_);
    if (!waiting_.empty()) {
      *next = waiting_.front();
      waiting_.pop_front();
      return true;
    }
    --inflight_;
    return false;
  }
  int64_t queued() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(waiting_.size());
  }

 private:
  const int64_t limit_;
  const bool drop_;
  mutable absl::Mutex mu_;
  int64_t inflight_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<Pending> waiting_ ABSL_GUARDED_BY(mu_);
};

}  // namespace onyx::load
