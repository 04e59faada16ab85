// StartInference: one ModelInferRequest from receipt to a filled response —
// shared by ModelInfer and ModelStreamInfer.
//
//   InferEnv env{repository, &shared_memory,
//                {.max_elements_per_input = config.max_elements_per_input,
//                 .max_message_bytes = config.max_message_bytes},
//                &sampler};
//   StartInference(env, request, response,
//                  [reactor](const std::string& model_label, const std::string& version_label,
//                            const absl::Status& status) {
//                    reactor->Finish(ToGrpcStatus(status));
//                  },
//                  InferCallOptions{deadline, [context] { return context->IsCancelled(); }});
//
// Looks the model up and decodes the request through DecodeInferRequest
// (request_decoder.h: shared-memory inputs and outputs resolved, then the
// request's bytes — its serialized size, shared-memory inputs included —
// admitted against the model's and the server's in-flight byte budgets before
// any tensor is decoded; RESOURCE_EXHAUSTED with the budget's overload.h
// reason and a retry hint when they are spent, held until the reply is
// given —, then validated within env.limits) and enqueues on
// the model's scheduler with the call's deadline, cancellation check and
// kDeadlineCancelSlack; then, on the scheduler's worker, fills `response`,
// writes shared-memory outputs, refuses a reply over
// env.limits.max_message_bytes (CheckReplySize) and counts the request, failed
// or not, in the model's statistics. When an enqueue meets a version that a
// reload just stopped (UNAVAILABLE), the model is looked up again, so a reload
// loses no request. An empty model name is INVALID_ARGUMENT. When
// `env.request_log` samples the call, one line (model, version, id, status,
// total µs, batch size) is logged as it finishes.
// Thread-safe; never blocks on inference.
#pragma once

#include <functional>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "grpc_service.pb.h"
#include "server/grpc/request_decoder.h"
#include "server/memory/shared_memory.h"
#include "server/models/model_repository.h"
#include "server/observability/logging.h"
#include "server/scheduling/byte_budget.h"

namespace onyx::server {

struct InferEnv {
  ModelRepository* repository = nullptr;
  const SharedMemoryRegistry* shared_memory = nullptr;
  ParseLimits limits;
  const RequestLogSampler* request_log = nullptr;  // null: no request lines
  // The server's max_inflight_bytes budget; null: none.
  ByteBudget* inflight_bytes = nullptr;
};

// Runs exactly once: on the caller's thread for errors found before enqueuing,
// on a scheduler thread otherwise. `model_label` is the model's name when the
// repository knows it, else ""; `version_label` the version that took the
// request (answered or refused it), else "" (metrics label values).
using InferFinish = absl::AnyInvocable<void(const std::string& model_label,
                                            const std::string& version_label, const absl::Status&)>;

// gRPC cancels a call when its deadline passes, on its own clock, which can
// run ahead of the scheduler's: a request found cancelled this close to its
// deadline is answered DEADLINE_EXCEEDED, not CANCELLED
// (InferenceRequest::deadline_cancel_slack).
inline constexpr absl::Duration kDeadlineCancelSlack = absl::Milliseconds(50);

// Per-call scheduling hints, copied into the InferenceRequest.
struct InferCallOptions {
  absl::Time deadline = absl::InfiniteFuture();  // the client's deadline
  std::function<bool()> is_cancelled;            // null: never cancelled
};

// `request` and `response` must stay alive until `finish` runs.
void StartInference(const InferEnv& env, const inference::ModelInferRequest* request,
                    inference::ModelInferResponse* response, InferFinish finish,
                    const InferCallOptions& call_options = {});

}  // namespace onyx::server
