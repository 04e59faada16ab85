#include "server/grpc/work_queue.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace onyx::server {

WorkQueue::WorkQueue(std::string name, int threads, size_t max_pending)
    : name_(std::move(name)), max_pending_(max_pending) {
  for (int i = 0; i < std::max(threads, 1); ++i) threads_.emplace_back([this] { Loop(); });
}

WorkQueue::~WorkQueue() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) thread.join();
}

absl::Status WorkQueue::Submit(absl::AnyInvocable<void()> work) {
  absl::MutexLock lock(&mu_);
  if (stopping_) {
    return absl::UnavailableError(absl::StrCat(name_, " work queue is stopping"));
  }
  if (pending_.size() >= max_pending_) {
    return absl::ResourceExhaustedError(absl::StrCat(name_, " work queue is full: ", pending_.size(),
                                                     " calls are waiting (limit ", max_pending_, ")"));
  }
  pending_.push_back(std::move(work));
  return absl::OkStatus();
}

void WorkQueue::Loop() {
  for (;;) {
    absl::AnyInvocable<void()> work;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](WorkQueue* q) ABSL_NO_THREAD_SAFETY_ANALYSIS { return q->stopping_ || !q->pending_.empty(); },
          this));
      if (pending_.empty()) return;  // stopping, and nothing left to run
      work = std::move(pending_.front());
      pending_.pop_front();
    }
    work();
  }
}

}  // namespace onyx::server
