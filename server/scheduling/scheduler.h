// Scheduler: how the server hands work to a model, after Triton's
// src/scheduler.h: enqueue, two counts (in flight, queued), a retry hint and
// stop.
// Implementations decide how requests are grouped (one at a time, dynamic
// batches) and on which threads they run; DynamicBatcher is the one onyxd uses.
//
//   RETURN_IF_ERROR(scheduler.Enqueue(std::move(request),
//                                     [](absl::StatusOr<InferenceResult> result) { ... }));
//   scheduler.Stop();  // on unload: drains, then joins
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/scheduling/inference_request.h"

namespace onyx::server {

// Implementations are thread-safe.
class Scheduler {
 public:
  virtual ~Scheduler() = default;

  // Queues `request`. On OK, `done` runs exactly once, later, on a scheduler
  // thread, with the outputs or the error: the engine's, or DEADLINE_EXCEEDED
  // / CANCELLED for a request that died before its engine run (it never
  // runs). On error `done` is dropped without being called:
  // RESOURCE_EXHAUSTED when the queue is full, DEADLINE_EXCEEDED when the
  // deadline has already passed, UNAVAILABLE after Stop() (the caller may look
  // the model up again), INVALID_ARGUMENT for a request the model cannot take
  // (longer than the largest size of a padded dim). Every status, given here
  // or to `done`, names the model and version; refusals for load (full queue,
  // deadlines) carry their overload.h reason, a full queue also a retry hint.
  // Never blocks on inference.
  virtual absl::Status Enqueue(std::unique_ptr<InferenceRequest> request, DoneCallback done) = 0;

  // Requests accepted and not yet completed (queued plus running).
  virtual int64_t InFlight() const = 0;

  // Requests accepted and waiting for a worker (not yet running).
  virtual int64_t QueueDepth() const = 0;

  // About how long until the model can take more work: what a client refused
  // for load should wait before trying again. Positive.
  virtual absl::Duration RetryAfterHint() const = 0;

  // Refuses new requests, completes every accepted one, then joins the worker
  // threads. Idempotent; blocks until drained. Must not be called from `done`.
  virtual void Stop() = 0;
};

}  // namespace onyx::server
