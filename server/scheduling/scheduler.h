// Scheduler: how the server hands work to a model. Three methods, after Triton's
// src/scheduler.h: enqueue, count, stop. Implementations decide how requests are
// grouped (one at a time, dynamic batches) and on which threads they run.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "server/scheduling/inference_request.h"

namespace onyx::server {

// Implementations are thread-safe.
class Scheduler {
 public:
  virtual ~Scheduler() = default;

  // Queues `request`. On OK, `done` runs exactly once, later, on a scheduler
  // thread, with the outputs or the error. On error `done` is dropped without
  // being called: RESOURCE_EXHAUSTED when the queue is full, UNAVAILABLE after
  // Stop(). Never blocks on inference.
  virtual absl::Status Enqueue(std::unique_ptr<InferenceRequest> request, DoneCallback done) = 0;

  // Requests accepted and not yet completed (queued plus running).
  virtual int64_t InFlight() const = 0;

  // Requests accepted and waiting for a worker (not yet running).
  virtual int64_t QueueDepth() const = 0;

  // Refuses new requests, completes every accepted one, then joins the worker
  // threads. Idempotent; blocks until drained. Must not be called from `done`.
  virtual void Stop() = 0;
};

}  // namespace onyx::server
