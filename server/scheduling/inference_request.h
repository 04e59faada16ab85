// The unit of work the scheduler queues: one validated request for one model,
// already decoded into engine tensors. Nothing here knows about gRPC.
// Plain data: thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "onyx/session.h"
#include "onyx/tensor.h"

namespace onyx::server {

struct InferenceRequest {
  // One tensor per model input. For a batched model every input's first
  // dimension equals batch_size.
  onyx::Feeds inputs;
  // Outputs to produce, in the order the response lists them; never empty.
  std::vector<std::string> output_names;
  // Rows in the first dimension of every input; 0 for a model without a batch
  // dimension (max_batch_size 0).
  int64_t batch_size = 0;
  // Completion is due by the earlier of `deadline` (absolute, on the
  // scheduler's clock) and `timeout` after Enqueue(). A request still queued
  // then is completed with DEADLINE_EXCEEDED and never runs; one already
  // running finishes normally.
  absl::Time deadline = absl::InfiniteFuture();
  absl::Duration timeout = absl::InfiniteDuration();
  // True once the client gave up; the scheduler then completes a queued
  // request with CANCELLED instead of running it. Null: never cancelled.
  // Called from scheduler threads while the request is queued.
  std::function<bool()> is_cancelled;
  // A request found cancelled within this of its deadline (the earlier one
  // above) is completed with DEADLINE_EXCEEDED instead of CANCELLED: for
  // callers whose transport cancels a call at its deadline on a clock that may
  // run ahead of the scheduler's. Zero: only the deadline itself counts.
  absl::Duration deadline_cancel_slack = absl::ZeroDuration();
};

struct InferenceResult {
  // Parallel to InferenceRequest::output_names; batched outputs have batch_size rows.
  std::vector<onyx::Tensor> outputs;
  // Set by the scheduler: how long the request waited in its queue (Enqueue
  // until a worker took it) and how long the engine run of its batch took.
  absl::Duration queue_time = absl::ZeroDuration();
  absl::Duration compute_time = absl::ZeroDuration();
};

// Receives the outcome of one request, exactly once, on a scheduler thread.
// It must not block for long: it runs on the model's worker.
using DoneCallback = absl::AnyInvocable<void(absl::StatusOr<InferenceResult>)>;

}  // namespace onyx::server
