// ByteBudget: a cap on the request bytes admitted and not yet answered — a
// model's or the whole server's — so that a burst of large requests is refused
// at the door instead of growing memory until the process is killed.
//
//   ByteBudget budget("server max_inflight_bytes", 1 << 30);   // 0: no cap
//   ASSIGN_OR_RETURN(ByteBudget::Lease lease, budget.Acquire(request_bytes));
//   ... answer the request ...
//   lease.Release();          // or let it go out of scope
//
// Acquire() admits a request when the bytes in flight plus its own stay within
// the limit, so one request larger than the whole budget is always refused.
// The budget must outlive its leases. Thread-safe (Lease: thread-compatible).
#pragma once

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace onyx::server {

class ByteBudget {
 public:
  // Holds `bytes` of a budget until released or destroyed. Move-only.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) {
      other.budget_ = nullptr;
    }
    Lease& operator=(Lease&& other) noexcept;
    ~Lease() { Release(); }
    // Gives the bytes back. Idempotent.
    void Release();

   private:
    friend class ByteBudget;
    Lease(ByteBudget* budget, int64_t bytes) : budget_(budget), bytes_(bytes) {}
    ByteBudget* budget_ = nullptr;
    int64_t bytes_ = 0;
  };

  // `name` heads refusals ("server max_inflight_bytes"); `limit` 0 = no cap.
  ByteBudget(std::string name, int64_t limit) : name_(std::move(name)), limit_(limit) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // RESOURCE_EXHAUSTED naming the budget, its limit, the bytes in flight and
  // the bytes asked for when they do not fit.
  absl::StatusOr<Lease> Acquire(int64_t bytes);

  int64_t in_flight() const;
  int64_t limit() const { return limit_; }

 private:
  const std::string name_;
  const int64_t limit_;
  mutable absl::Mutex mu_;
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace onyx::server
