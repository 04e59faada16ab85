// QueueScheduler: the first Scheduler — a bounded FIFO per model drained by a
// fixed set of worker threads, each request run on its own bucket session.
//
//   QueueScheduler::Options options;
//   options.model_name = "mlp";
//   options.model = bucket_sessions;            // std::shared_ptr<const BucketedModel>
//   options.max_queue_size = 256;
//   options.instance_count = 2;                 // two concurrent runs
//   ASSIGN_OR_RETURN(auto scheduler, QueueScheduler::Create(std::move(options)));
//   RETURN_IF_ERROR(scheduler->Enqueue(std::move(request), [](auto result) { ... }));
//   scheduler->Stop();                          // drains, then joins the workers
//
// Workers are created here, once; no thread is started per request. Requests are
// not merged yet: the dynamic batcher (a later issue) replaces TakeWork() with one
// that waits up to max_queue_delay_us to fill a bucket and runs the stacked batch
// through batch_util.h.
// Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/scheduling/bucketed_model.h"
#include "server/scheduling/scheduler.h"

namespace onyx::server {

class QueueScheduler final : public Scheduler {
 public:
  struct Options {
    // Used in error messages.
    std::string model_name;
    // Shared with the model; kept alive until the scheduler is destroyed.
    std::shared_ptr<const BucketedModel> model;
    // Requests waiting (not running) beyond this are refused.
    int64_t max_queue_size = 256;
    // Worker threads, i.e. concurrent runs of the model.
    int64_t instance_count = 1;
  };

  // INVALID_ARGUMENT when `model` is null or a size is < 1.
  static absl::StatusOr<std::unique_ptr<QueueScheduler>> Create(Options options);

  // Stops (draining) and joins the workers.
  ~QueueScheduler() override;

  absl::Status Enqueue(std::unique_ptr<InferenceRequest> request, DoneCallback done) override;
  int64_t InFlight() const override;
  void Stop() override;

  // Requests waiting for a worker (for metrics and tests).
  int64_t QueueDepth() const;

 private:
  struct Work {
    std::unique_ptr<InferenceRequest> request;
    DoneCallback done;
  };

  explicit QueueScheduler(Options options);
  void WorkerLoop();
  // Blocks until work is queued or the scheduler stops; false when stopped and
  // the queue is empty. The seam where the dynamic batcher will form batches.
  bool TakeWork(Work* work);

  const Options options_;
  mutable absl::Mutex mu_;
  std::deque<Work> queue_ ABSL_GUARDED_BY(mu_);
  int64_t running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  absl::Mutex join_mu_;  // serialises Stop() callers while they join
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(join_mu_);
};

}  // namespace onyx::server
