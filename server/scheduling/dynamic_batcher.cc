#include "server/scheduling/dynamic_batcher.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/scheduling/bucket_runner.h"

namespace onyx::server {

absl::StatusOr<std::unique_ptr<DynamicBatcher>> DynamicBatcher::Create(Options options) {
  if (options.model == nullptr) {
    return absl::InvalidArgumentError("DynamicBatcher: no model");
  }
  const std::string who = absl::StrCat("DynamicBatcher for '", options.model_name, "': ");
  if (options.max_queue_size < 1 || options.instance_count < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(who, "max_queue_size and instance_count must be >= 1, got ",
                     options.max_queue_size, " and ", options.instance_count));
  }
  if (options.max_queue_delay < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(who, "max_queue_delay must be >= 0"));
  }
  const absl::Span<const int64_t> buckets = options.model->buckets();
  const int64_t largest = buckets.empty() ? 0 : buckets.back();
  if (options.max_batch_size < 0 || options.max_batch_size > largest) {
    return absl::InvalidArgumentError(absl::StrCat(who, "max_batch_size must be in [0, ", largest,
                                                   "] (the largest bucket), got ",
                                                   options.max_batch_size));
  }
  const int64_t max_batch = options.max_batch_size == 0 ? largest : options.max_batch_size;
  if (options.clock == nullptr) options.clock = RealClock::Shared();
  auto batcher = std::unique_ptr<DynamicBatcher>(new DynamicBatcher(std::move(options), max_batch));
  absl::MutexLock lock(&batcher->join_mu_);
  for (int64_t i = 0; i < batcher->options_.instance_count; ++i) {
    batcher->workers_.emplace_back([b = batcher.get()] { b->WorkerLoop(); });
  }
  batcher->reaper_ = std::thread([b = batcher.get()] { b->ReaperLoop(); });
  return batcher;
}

DynamicBatcher::DynamicBatcher(Options options, int64_t max_batch_size)
    : options_(std::move(options)),
      label_(absl::StrCat("model '", options_.model_name, "'",
                          options_.model_version.empty() ? "" : " version ",
                          options_.model_version)),
      max_batch_size_(max_batch_size),
      clock_(options_.clock) {}

DynamicBatcher::~DynamicBatcher() { Stop(); }

absl::Status DynamicBatcher::Enqueue(std::unique_ptr<InferenceRequest> request, DoneCallback done) {
  if (!options_.model->padded_dims().empty()) {
    absl::StatusOr<std::vector<size_t>> sizes = PaddedSizeIndexes(*options_.model, *request);
    if (!sizes.ok()) {
      return absl::Status(sizes.status().code(),
                          absl::StrCat(label_, ": ", sizes.status().message()));
    }
  }
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  if (stopping_) {
    return absl::UnavailableError(absl::StrCat(label_, " is shutting down"));
  }
  const absl::Time deadline = std::min(request->deadline, now + request->timeout);
  if (now >= deadline) {
    return Rejected(absl::DeadlineExceededError(
                        absl::StrCat(label_, ": deadline passed before the request was queued")),
                    RejectionReason::kDeadlineOnArrival);
  }
  if (static_cast<int64_t>(queue_.size()) >= options_.max_queue_size) {
    const absl::Duration retry = RetryAfterLocked();
    return Rejected(
        absl::ResourceExhaustedError(absl::StrCat(
            label_, ": queue full (max_queue_size ", options_.max_queue_size,
            " requests waiting); retry in about ",
            absl::ToInt64Milliseconds(absl::Ceil(retry, absl::Milliseconds(1))), " ms")),
        RejectionReason::kQueueFull, retry);
  }
  // A request with no rows (a model without buckets) still counts as one, so
  // that waiting workers see it.
  arrived_rows_ += std::max<int64_t>(request->batch_size, 1);
  if (deadline < reaper_wake_ ||
      (request->is_cancelled && now + kCancelPollInterval < reaper_wake_)) {
    ++reaper_kicks_;  // it must look at this one before it planned to wake
  }
  queue_.push_back(Entry{std::move(request), std::move(done), now, deadline, now});
  return absl::OkStatus();
}

int64_t DynamicBatcher::InFlight() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size()) + running_;
}

int64_t DynamicBatcher::QueueDepth() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size());
}

absl::Duration DynamicBatcher::RetryAfterHint() const {
  absl::MutexLock lock(&mu_);
  return RetryAfterLocked();
}

absl::Duration DynamicBatcher::RetryAfterLocked() const {
  // Before any run, the batching delay is the only time scale known.
  const absl::Duration per_run = recent_run_ > absl::ZeroDuration()
                                     ? recent_run_
                                     : options_.max_queue_delay + absl::Milliseconds(1);
  // Requests one round of the workers takes (a request has at least one row).
  const int64_t per_round = std::max<int64_t>(max_batch_size_, 1) * options_.instance_count;
  const int64_t queued = static_cast<int64_t>(queue_.size());
  const int64_t rounds = std::max<int64_t>(1, (queued + per_round - 1) / per_round);
  return std::clamp(per_run * rounds, absl::Milliseconds(1), absl::Seconds(30));
}

absl::Status DynamicBatcher::DeadStatus(const Entry& entry, absl::Time now, RejectionReason reason,
                                        absl::string_view where) const {
  const bool cancelled = entry.request->is_cancelled && entry.request->is_cancelled();
  // A caller's transport may cancel at the deadline on a clock ahead of
  // ours: a cancellation that close to the deadline is the deadline.
  if (now >= entry.deadline ||
      (cancelled && now >= entry.deadline - entry.request->deadline_cancel_slack)) {
    return Rejected(absl::DeadlineExceededError(absl::StrCat(label_, ": deadline passed ", where)),
                    reason);
  }
  if (cancelled) return absl::CancelledError(absl::StrCat(label_, ": request cancelled ", where));
  return absl::OkStatus();
}

void DynamicBatcher::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  absl::MutexLock lock(&join_mu_);
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
  if (reaper_.joinable()) reaper_.join();
}

void DynamicBatcher::RemoveDead(absl::Time now, Work* work) {
  for (auto it = queue_.begin(); it != queue_.end();) {
    absl::Status status =
        DeadStatus(*it, now, RejectionReason::kDeadlineInQueue, "while the request was queued");
    if (status.ok()) {
      ++it;
      continue;
    }
    work->refused.emplace_back(std::move(*it), std::move(status));
    it = queue_.erase(it);
  }
}

std::vector<size_t> DynamicBatcher::PlanBatch(int64_t* rows) const {
  const InferenceRequest& head = *queue_.front().request;
  std::vector<size_t> positions = {0};
  *rows = head.batch_size;
  // A model without buckets, or a request the runner will reject, runs alone.
  if (max_batch_size_ == 0 || head.batch_size < 1 || head.batch_size >= max_batch_size_) {
    return positions;
  }
  for (size_t i = 1; i < queue_.size() && *rows < max_batch_size_; ++i) {
    const InferenceRequest& next = *queue_[i].request;
    if (*rows + next.batch_size <= max_batch_size_ && CanShareBatch(*options_.model, head, next)) {
      positions.push_back(i);
      *rows += next.batch_size;
    }
  }
  return positions;
}

bool DynamicBatcher::TakeWork(Work* work) {
  absl::MutexLock lock(&mu_);
  while (true) {
    auto has_work = [this]()
                        ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty() || stopping_; };
    mu_.Await(absl::Condition(&has_work));
    if (queue_.empty()) return false;  // stopping and drained

    const absl::Time now = clock_->Now();
    RemoveDead(now, work);
    if (!work->refused.empty()) {
      running_ += static_cast<int64_t>(work->refused.size());
      return true;
    }

    int64_t rows = 0;
    std::vector<size_t> positions = PlanBatch(&rows);
    const bool alone =
        positions.size() == 1 && (max_batch_size_ == 0 || queue_.front().request->batch_size < 1);
    const absl::Time send_by = queue_.front().enqueued + options_.max_queue_delay;
    const bool full = rows >= max_batch_size_;
    if (alone || full || running_batches_ == 0 || now >= send_by || stopping_) {
      // Erase from the back so earlier positions stay valid.
      work->batch.resize(positions.size());
      for (size_t k = positions.size(); k-- > 0;) {
        work->batch[k] = std::move(queue_[positions[k]]);
        work->batch[k].taken = now;
        queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(positions[k]));
      }
      running_ += static_cast<int64_t>(work->batch.size());
      ++running_batches_;
      return true;
    }

    // Another run keeps the model busy: wait until enough rows arrived to fill
    // the batch (fewer cannot, whatever their shapes), until no engine run is
    // in progress (RunBatch counts a run done before it completes its
    // requests), or for the head's delay to run out. Expired requests are the
    // reaper's to complete; if it removes the head, the wait ends early at the
    // old head's delay and the batch is planned again.
    const absl::Time wake = send_by;
    const int64_t fill_at = arrived_rows_ + (max_batch_size_ - rows);
    auto changed = [this, fill_at]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return arrived_rows_ >= fill_at || running_batches_ == 0 || stopping_;
    };
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&changed), wake);
  }
}

void DynamicBatcher::RunBatch(std::vector<Entry>& batch) {
  if (options_.on_batch_formed) options_.on_batch_formed(static_cast<int64_t>(batch.size()));
  // The last look before compute: a request that died since it was taken
  // costs no engine time, and does not hold the others back.
  {
    const absl::Time now = clock_->Now();
    std::vector<Entry> live;
    live.reserve(batch.size());
    for (Entry& entry : batch) {
      absl::Status status =
          DeadStatus(entry, now, RejectionReason::kDeadlineBeforeRun, "before the request ran");
      if (status.ok()) {
        live.push_back(std::move(entry));
      } else {
        std::move(entry.done)(std::move(status));
      }
    }
    batch.swap(live);  // the completed ones' requests are released here
  }
  if (batch.empty()) {
    absl::MutexLock lock(&mu_);
    --running_batches_;
    return;
  }
  std::vector<const InferenceRequest*> requests;
  requests.reserve(batch.size());
  int64_t rows = 0;
  for (const Entry& entry : batch) {
    requests.push_back(entry.request.get());
    rows += entry.request->batch_size;
  }
  const absl::Time started = clock_->Now();
  std::vector<absl::StatusOr<InferenceResult>> results = RunIsolatingFailures(requests);
  const absl::Duration compute = clock_->Now() - started;
  {
    // The engine is free: a worker waiting for its batch to fill may run it
    // now, while this one completes the requests (replies take a while).
    absl::MutexLock lock(&mu_);
    --running_batches_;
    recent_run_ = recent_run_ == absl::ZeroDuration() ? compute : (recent_run_ * 4 + compute) / 5;
  }
  if (options_.on_execution) options_.on_execution(rows, compute);
  if (options_.on_batch) options_.on_batch(static_cast<int64_t>(batch.size()), rows);
  if (options_.on_timing) {
    for (const Entry& entry : batch) options_.on_timing(entry.taken - entry.enqueued, compute);
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    if (results[i].ok()) {
      results[i]->queue_time = batch[i].taken - batch[i].enqueued;
      results[i]->compute_time = compute;
    }
    std::move(batch[i].done)(std::move(results[i]));
  }
}

std::vector<absl::StatusOr<InferenceResult>> DynamicBatcher::RunIsolatingFailures(
    const std::vector<const InferenceRequest*>& requests) const {
  // Engine errors name the node, not the model the client asked for.
  auto labelled = [this](const absl::Status& status) {
    return absl::Status(status.code(), absl::StrCat(label_, ": ", status.message()));
  };
  absl::StatusOr<std::vector<InferenceResult>> together =
      RunBatchOnBucket(*options_.model, requests);
  std::vector<absl::StatusOr<InferenceResult>> results;
  results.reserve(requests.size());
  if (together.ok()) {
    for (InferenceResult& result : *together) results.emplace_back(std::move(result));
    return results;
  }
  // One request's values (an index out of range, a shape its data implies)
  // or the batch's size (an arena limit) can fail a run that each request
  // alone would pass: each is run again alone, so that a bad request fails
  // only itself. A run that was stopped is not retried.
  const absl::StatusCode code = together.status().code();
  if (requests.size() == 1 || code == absl::StatusCode::kCancelled ||
      code == absl::StatusCode::kDeadlineExceeded) {
    results.assign(requests.size(), labelled(together.status()));
    return results;
  }
  for (const InferenceRequest* request : requests) {
    absl::StatusOr<std::vector<InferenceResult>> alone =
        RunBatchOnBucket(*options_.model, {request});
    if (alone.ok()) {
      results.emplace_back(std::move(alone->front()));
    } else {
      results.emplace_back(labelled(alone.status()));
    }
  }
  return results;
}

void DynamicBatcher::ReaperLoop() {
  // Locked by hand: the lock is released around the callbacks.
  mu_.Lock();
  while (true) {
    auto has_queue = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !queue_.empty() || stopping_;
    };
    mu_.Await(absl::Condition(&has_queue));
    // While stopping, the workers drain the queue; the reaper keeps completing
    // dead requests that a long run would otherwise hold up, until it is empty.
    if (queue_.empty()) break;

    const absl::Time now = clock_->Now();
    Work work;
    RemoveDead(now, &work);
    if (!work.refused.empty()) {
      // Counted as running so that InFlight() never misses them.
      const int64_t refused = static_cast<int64_t>(work.refused.size());
      running_ += refused;
      mu_.Unlock();
      for (auto& [entry, status] : work.refused) std::move(entry.done)(std::move(status));
      work = Work{};  // release the requests before counting them done
      mu_.Lock();
      running_ -= refused;
      continue;
    }

    // Sleep until the earliest queued deadline, the next cancellation poll,
    // an arrival that needs looking at sooner (Enqueue kicks), stopping, or,
    // once stopping, the workers having drained the queue (then it exits).
    // Requests the workers take otherwise need nothing from the reaper: it
    // finds them gone when it wakes.
    absl::Time wake = absl::InfiniteFuture();
    for (const Entry& entry : queue_) {
      wake = std::min(wake, entry.deadline);
      if (entry.request->is_cancelled) wake = std::min(wake, now + kCancelPollInterval);
    }
    const int64_t seen_kicks = reaper_kicks_;
    const bool seen_stopping = stopping_;
    auto changed = [this, seen_kicks, seen_stopping]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return reaper_kicks_ != seen_kicks || stopping_ != seen_stopping ||
             (stopping_ && queue_.empty());
    };
    reaper_wake_ = wake;
    clock_->AwaitWithDeadline(&mu_, absl::Condition(&changed), wake);
    reaper_wake_ = absl::InfinitePast();
  }
  mu_.Unlock();
}

void DynamicBatcher::WorkerLoop() {
  while (true) {
    Work work;
    if (!TakeWork(&work)) return;
    // Counted now: RunBatch drops the requests it completes without a run.
    const int64_t completed = static_cast<int64_t>(work.refused.size() + work.batch.size());
    for (auto& [entry, status] : work.refused) std::move(entry.done)(std::move(status));
    if (!work.batch.empty()) RunBatch(work.batch);
    work = Work{};  // release the requests before counting them done
    absl::MutexLock lock(&mu_);
    running_ -= completed;
  }
}

}  // namespace onyx::server
