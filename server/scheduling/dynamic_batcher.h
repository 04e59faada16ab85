// DynamicBatcher: the Scheduler of a model — a bounded FIFO drained by a fixed
// set of worker threads that merge compatible requests into one engine run.
//
//   DynamicBatcher::Options options;
//   options.model_name = "mlp";
//   options.model = bucket_sessions;            // std::shared_ptr<const BucketedModel>
//   options.max_batch_size = 8;                 // rows per run; <= the largest bucket
//   options.max_queue_delay = absl::Microseconds(200);
//   options.max_queue_size = 256;
//   options.instance_count = 2;                 // two concurrent runs
//   ASSIGN_OR_RETURN(auto batcher, DynamicBatcher::Create(std::move(options)));
//   RETURN_IF_ERROR(batcher->Enqueue(std::move(request), [](auto result) { ... }));
//   batcher->Stop();                            // drains, then joins the threads
//
// Forming a batch: a free worker looks at the oldest queued request (the head)
// and gathers, in arrival order, every later request that CanShareBatch() with
// it (bucket_runner.h; with padded dims, only requests padded to the same
// sizes) while the rows stay <= max_batch_size. It runs the batch at once
// when its rows reach max_batch_size, when no other worker is running a batch
// (an idle model gains nothing by waiting: nothing else would use the cores
// meanwhile), when the head has waited max_queue_delay, or when stopping;
// otherwise, i.e. while another run keeps the model busy, it waits for more
// arrivals until then. A batch whose rows equal a smaller bucket does NOT run
// at once under load: bucket 1 always exists, so that rule would let a free
// worker take lone requests and turn load into many 1-row runs, whose fixed
// per-run cost (stack, session run, slice, wake-ups) is what batching exists
// to amortise; a full bucket only saves padding rows, which cost less than one
// more run. Buckets are preferred only in that a batch is padded to the
// smallest bucket holding it. The waiting worker is woken only when enough
// rows have arrived to possibly fill max_batch_size (not per arrival), when
// the other run's engine work ends (before that worker completes its requests,
// which includes sending replies), at the head's delay, or when stopping.
// Incompatible requests are never merged; they form their own batches.
// The batch is stacked along dimension 0, zero-padded to the smallest bucket
// that holds it, run once, and each request gets exactly its own rows back
// (a single request that fills its bucket exactly is run without a copy).
// A model without buckets runs each request alone. When a batch's run fails,
// each of its requests is run again alone (a cancelled or timed-out run is
// not): one request whose values make the engine fail (an index out of range,
// a shape its data implies) fails only itself, with the engine's error
// prefixed by the model. Each result carries its
// queue time (Enqueue until a worker took it) and its batch's engine run time,
// both on the injected Clock.
//
// Deadlines and cancellation are checked three times, so that no engine time
// is spent on a request nobody waits for: Enqueue refuses a request whose
// deadline (InferenceRequest::deadline, or `timeout` after Enqueue) has
// already passed; a queued request whose deadline passes is completed with
// DEADLINE_EXCEEDED, and one whose is_cancelled() returns true with CANCELLED
// (DEADLINE_EXCEEDED when within the request's deadline_cancel_slack of that
// deadline); and a worker checks its batch's requests once more right before
// the engine run, completing those that died meanwhile the same way and
// running the rest (none: no run). Each refusal carries its overload.h reason
// (deadline_on_arrival, deadline_in_queue, deadline_before_run). This happens promptly even while
// every worker is busy: one reaper thread per batcher sleeps until the earliest queued deadline
// and, while any queued request has an is_cancelled, polls it every kCancelPollInterval
// (cancellation has no event to wait on). A worker forming a batch also drops such requests first.
// Each request's done runs exactly once, outside the batcher's lock.
//
// A full queue is RESOURCE_EXHAUSTED with a retry hint (RetryAfterHint()):
// the time the workers need to run the queue's requests at the recent engine
// run time (an average over the last runs), between 1 ms and 30 s.
//
// Workers are created by Create(), instance_count of them, plus the reaper; no
// thread is started per request. Time comes from the injected Clock (tests use
// a fake one).
// Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/scheduling/bucketed_model.h"
#include "server/scheduling/clock.h"
#include "server/scheduling/overload.h"
#include "server/scheduling/scheduler.h"

namespace onyx::server {

// Told about every engine run: how many requests it merged and their rows
// (before padding). Called on a worker thread after the run; must not block.
using BatchObserver = std::function<void(int64_t requests, int64_t rows)>;

// Told about every engine run, successful or not: its rows (before padding)
// and how long the run took. Called on a worker thread; must not block.
using ExecutionObserver = std::function<void(int64_t rows, absl::Duration run)>;

// Told, for each request of every engine run, how long it waited in the queue
// (Enqueue until a worker took its batch) and how long that run took. Called
// on a worker thread after the run, before the requests complete; must not
// block. Requests refused from the queue (deadline, cancelled) are not told.
using TimingObserver = std::function<void(absl::Duration queued, absl::Duration compute)>;

class DynamicBatcher final : public Scheduler {
 public:
  // How often, on the injected Clock, the reaper asks queued requests whether
  // they were cancelled (only while some queued request has an is_cancelled).
  static constexpr absl::Duration kCancelPollInterval = absl::Milliseconds(5);

  struct Options {
    // Used in error messages: "model '<model_name>' version <model_version>"
    // prefixes every status the batcher gives a request, the engine's
    // included (the version is left out when empty).
    std::string model_name;
    std::string model_version;
    // Shared with the model; kept alive until the batcher is destroyed.
    std::shared_ptr<const BucketedModel> model;
    // Most rows merged into one run; 0 means the largest bucket. Ignored for
    // a model without buckets.
    int64_t max_batch_size = 0;
    // Longest the oldest queued request waits for others to fill its batch.
    absl::Duration max_queue_delay = absl::ZeroDuration();
    // Requests waiting (not running) beyond this are refused.
    int64_t max_queue_size = 256;
    // Worker threads, i.e. concurrent runs of the model.
    int64_t instance_count = 1;
    // Null: RealClock::Shared().
    std::shared_ptr<const Clock> clock;
    // Optional.
    BatchObserver on_batch;
    // Optional.
    TimingObserver on_timing;
    // Optional (the model's statistics count executions with it).
    ExecutionObserver on_execution;
    // Optional: called on the worker with the number of requests in a batch
    // after it left the queue, before their deadlines are checked again and
    // the engine runs (tests move a fake clock here). Must not block.
    std::function<void(int64_t requests)> on_batch_formed;
  };

  // INVALID_ARGUMENT when `model` is null, max_queue_size or instance_count is
  // < 1, max_queue_delay is negative, or max_batch_size is negative or larger
  // than the largest bucket.
  static absl::StatusOr<std::unique_ptr<DynamicBatcher>> Create(Options options);

  // Stops (draining) and joins the workers and the reaper.
  ~DynamicBatcher() override;

  // RESOURCE_EXHAUSTED names the model and max_queue_size; INVALID_ARGUMENT
  // for a request longer than the largest size of a padded dim;
  // DEADLINE_EXCEEDED for a request whose deadline has passed.
  absl::Status Enqueue(std::unique_ptr<InferenceRequest> request, DoneCallback done) override;
  int64_t InFlight() const override;
  int64_t QueueDepth() const override;
  absl::Duration RetryAfterHint() const override;
  void Stop() override;

 private:
  struct Entry {
    std::unique_ptr<InferenceRequest> request;
    DoneCallback done;
    absl::Time enqueued;
    absl::Time deadline;  // the earlier of the request's deadline and timeout
    absl::Time taken;     // when a worker took it from the queue
  };
  // What a worker took from the queue: requests to refuse with a status, or
  // one batch to run (never both).
  struct Work {
    std::vector<Entry> batch;
    std::vector<std::pair<Entry, absl::Status>> refused;
  };

  DynamicBatcher(Options options, int64_t max_batch_size);
  void WorkerLoop();
  // Completes dead queued requests while the workers are busy; returns when
  // stopped and the queue is empty.
  void ReaperLoop();
  // Blocks until there is work; false when stopped and the queue is empty.
  bool TakeWork(Work* work);
  // Moves expired and cancelled requests from the queue to `refused`.
  void RemoveDead(absl::Time now, Work* work) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queue positions of the batch headed by queue_.front(), and its rows.
  std::vector<size_t> PlanBatch(int64_t* rows) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RunBatch(std::vector<Entry>& batch);
  // The requests' results, run as one batch; when that run fails, each
  // request's own run alone.
  std::vector<absl::StatusOr<InferenceResult>> RunIsolatingFailures(
      const std::vector<const InferenceRequest*>& requests) const;
  // The status for a request that died (deadline or cancellation) at `now`,
  // with `reason` for a deadline; OK while it lives.
  absl::Status DeadStatus(const Entry& entry, absl::Time now, RejectionReason reason,
                          absl::string_view where) const;
  absl::Duration RetryAfterLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const std::string label_;       // "model 'mlp' version 1", from the options
  const int64_t max_batch_size_;  // resolved; 0 for a model without buckets
  const std::shared_ptr<const Clock> clock_;
  mutable absl::Mutex mu_;
  std::deque<Entry> queue_ ABSL_GUARDED_BY(mu_);
  int64_t running_ ABSL_GUARDED_BY(mu_) = 0;          // taken by workers, not yet completed
  int64_t running_batches_ ABSL_GUARDED_BY(mu_) = 0;  // engine runs in progress (not replies)
  // Rows of every request ever enqueued: a worker waiting for a batch to fill
  // wakes once enough new rows arrived to possibly reach max_batch_size.
  int64_t arrived_rows_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // When the sleeping reaper will look at the queue next (InfinitePast while
  // it is not in a timed sleep), and how often an arrival needed it sooner:
  // an arrival wakes it only then, not on every request.
  absl::Time reaper_wake_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t reaper_kicks_ ABSL_GUARDED_BY(mu_) = 0;
  // Moving average of recent engine run times; zero before the first run.
  absl::Duration recent_run_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();

  absl::Mutex join_mu_;  // serialises Stop() callers while they join
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(join_mu_);
  std::thread reaper_ ABSL_GUARDED_BY(join_mu_);
};

}  // namespace onyx::server
