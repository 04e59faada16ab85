#include "server/scheduling/byte_budget.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace onyx::server {

ByteBudget::Lease& ByteBudget::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = other.bytes_;
  }
  return *this;
}

void ByteBudget::Lease::Release() {
  if (budget_ == nullptr) return;
  absl::MutexLock lock(&budget_->mu_);
  budget_->in_flight_ -= bytes_;
  budget_ = nullptr;
}

absl::StatusOr<ByteBudget::Lease> ByteBudget::Acquire(int64_t bytes) {
  absl::MutexLock lock(&mu_);
  if (limit_ > 0 && (bytes > limit_ || in_flight_ > limit_ - bytes)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        name_, " ", limit_, " would be exceeded: ", in_flight_,
        " request bytes in flight, this request has ", bytes,
        bytes > limit_ ? " (more than the whole budget: it can never be admitted)" : ""));
  }
  in_flight_ += bytes;
  return Lease(this, bytes);
}

int64_t ByteBudget::in_flight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

}  // namespace onyx::server
