#include "server/scheduling/queue_scheduler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/scheduling/bucket_runner.h"

namespace onyx::server {

absl::StatusOr<std::unique_ptr<QueueScheduler>> QueueScheduler::Create(Options options) {
  if (options.model == nullptr) {
    return absl::InvalidArgumentError("QueueScheduler: no model");
  }
  if (options.max_queue_size < 1 || options.instance_count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("QueueScheduler for '", options.model_name,
                     "': max_queue_size and instance_count must be >= 1, got ",
                     options.max_queue_size, " and ", options.instance_count));
  }
  auto scheduler = std::unique_ptr<QueueScheduler>(new QueueScheduler(std::move(options)));
  absl::MutexLock lock(&scheduler->join_mu_);
  for (int64_t i = 0; i < scheduler->options_.instance_count; ++i) {
    scheduler->workers_.emplace_back([s = scheduler.get()] { s->WorkerLoop(); });
  }
  return scheduler;
}

QueueScheduler::QueueScheduler(Options options) : options_(std::move(options)) {}

QueueScheduler::~QueueScheduler() { Stop(); }

absl::Status QueueScheduler::Enqueue(std::unique_ptr<InferenceRequest> request, DoneCallback done) {
  absl::MutexLock lock(&mu_);
  if (stopping_) {
    return absl::UnavailableError(
        absl::StrCat("model '", options_.model_name, "' is shutting down"));
  }
  if (static_cast<int64_t>(queue_.size()) >= options_.max_queue_size) {
    return absl::ResourceExhaustedError(absl::StrCat("model '", options_.model_name,
                                                     "': queue full (", options_.max_queue_size,
                                                     " requests waiting)"));
  }
  queue_.push_back(Work{std::move(request), std::move(done)});
  return absl::OkStatus();
}

int64_t QueueScheduler::InFlight() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size()) + running_;
}

int64_t QueueScheduler::QueueDepth() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size());
}

void QueueScheduler::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  absl::MutexLock lock(&join_mu_);
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
}

bool QueueScheduler::TakeWork(Work* work) {
  absl::MutexLock lock(&mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty() || stopping_; };
  mu_.Await(absl::Condition(&ready));
  if (queue_.empty()) return false;  // stopping and drained
  *work = std::move(queue_.front());
  queue_.pop_front();
  ++running_;
  return true;
}

void QueueScheduler::WorkerLoop() {
  Work work;
  while (TakeWork(&work)) {
    absl::StatusOr<InferenceResult> result = RunOnBucket(*options_.model, *work.request);
    std::move(work.done)(std::move(result));
    work = Work{};  // release the request before counting it done
    absl::MutexLock lock(&mu_);
    --running_;
  }
}

}  // namespace onyx::server
