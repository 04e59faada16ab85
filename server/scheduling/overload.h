// Overload refusals: why a request was turned away for load (not for being a
// bad request), and when the client might try again — carried on the
// absl::Status itself, so that the layer that refuses (batcher, admission,
// stream) needs no channel to the layer that counts and answers (metrics, the
// gRPC edge).
//
//   return Rejected(absl::ResourceExhaustedError("queue full ..."),
//                   RejectionReason::kQueueFull, absl::Milliseconds(40));
//   ...
//   if (auto reason = RejectionReasonOf(status)) metrics.RecordRejection(..., *reason);
//   if (auto wait = RetryAfterOf(status)) context->AddTrailingMetadata(...);
//
// Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace onyx::server {

enum class RejectionReason {
  kQueueFull,            // the model's batcher queue holds max_queue_size requests
  kModelInflightBytes,   // the model's dynamic_batching.max_inflight_bytes would be passed
  kServerInflightBytes,  // the server's max_inflight_bytes would be passed
  kDeadlineOnArrival,    // the deadline had passed when the request reached the batcher
  kDeadlineInQueue,      // the deadline passed while the request waited in the queue
  kDeadlineBeforeRun,    // the deadline passed after batching, before the engine ran
  kStreamBufferFull,     // a ModelStreamInfer client left max_stream_buffer_bytes unread
};
inline constexpr size_t kRejectionReasonCount = 7;

// The metric label: "queue_full", "model_inflight_bytes",
// "server_inflight_bytes", "deadline_on_arrival", "deadline_in_queue",
// "deadline_before_run", "stream_buffer_full".
absl::string_view RejectionReasonName(RejectionReason reason);

// `status` (not OK) marked with `reason` and, when positive, a retry-after
// hint (rounded up to whole milliseconds, at least 1).
absl::Status Rejected(absl::Status status, RejectionReason reason,
                      absl::Duration retry_after = absl::ZeroDuration());

// The reason and hint Rejected() attached; nullopt for any other status.
std::optional<RejectionReason> RejectionReasonOf(const absl::Status& status);
std::optional<absl::Duration> RetryAfterOf(const absl::Status& status);

// The trailing-metadata key of the hint, in milliseconds: gRPC's retry
// pushback (gRFC A6), which gRPC clients with a retry policy honour.
inline constexpr absl::string_view kRetryPushbackKey = "grpc-retry-pushback-ms";

}  // namespace onyx::server
