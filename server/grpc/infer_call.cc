#include "server/grpc/infer_call.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "onyx/status_macros.h"
#include "server/grpc/infer_response.h"
#include "server/grpc/request_decoder.h"
#include "server/grpc/shared_memory_io.h"
#include "server/grpc/status_util.h"
#include "server/scheduling/overload.h"

namespace onyx::server {
namespace {

using SteadyClock = std::chrono::steady_clock;

uint64_t NsSince(SteadyClock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - start).count());
}

uint64_t NowMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// The in-flight byte budgets a request holds until it is answered; released
// by Release() or on destruction (a refused enqueue drops it at once).
struct Admission {
  ByteBudget::Lease model;
  ByteBudget::Lease server;
  void Release() {
    model.Release();
    server.Release();
  }
};

absl::StatusOr<Admission> Admit(const InferEnv& env, const Model& model, int64_t bytes) {
  Admission admission;
  absl::StatusOr<ByteBudget::Lease> lease = model.inflight_bytes().Acquire(bytes);
  if (!lease.ok()) {
    return Rejected(lease.status(), RejectionReason::kModelInflightBytes,
                    model.scheduler().RetryAfterHint());
  }
  admission.model = *std::move(lease);
  if (env.inflight_bytes != nullptr) {
    lease = env.inflight_bytes->Acquire(bytes);
    if (!lease.ok()) {
      return Rejected(lease.status(), RejectionReason::kServerInflightBytes,
                      model.scheduler().RetryAfterHint());
    }
    admission.server = *std::move(lease);
  }
  return admission;
}

// Wraps `finish` so that it logs the call's line first; `line` is completed
// (served version, batch size) as the call progresses.
InferFinish LoggingFinish(InferFinish finish, std::shared_ptr<RequestLogLine> line,
                          SteadyClock::time_point start) {
  return [finish = std::move(finish), line = std::move(line), start](
             const std::string& model_label, const std::string& version_label,
             const absl::Status& status) mutable {
    line->code = status.code();
    line->total_us = static_cast<int64_t>(NsSince(start) / 1000);
    LogRequest(*line);
    finish(model_label, version_label, status);
  };
}

void StartInferenceUnguarded(const InferEnv& env, const inference::ModelInferRequest* request,
                             inference::ModelInferResponse* response, InferFinish finish,
                             const InferCallOptions& call_options) {
  const SteadyClock::time_point start = SteadyClock::now();
  std::shared_ptr<RequestLogLine> log_line;
  if (env.request_log != nullptr && env.request_log->Sample()) {
    log_line = std::make_shared<RequestLogLine>();
    log_line->model = request->model_name();
    log_line->version = request->model_version();
    log_line->id = request->id();
    finish = LoggingFinish(std::move(finish), log_line, start);
  }
  if (request->model_name().empty()) {
    finish("", "",
           absl::InvalidArgumentError("model_name is empty (expected the name of a model)"));
    return;
  }
  // A reload swaps versions between our lookup and our enqueue at most a few
  // times in a row; each retry needs a newer version than the one refused.
  constexpr int kAttempts = 4;
  for (int attempt = 1;; ++attempt) {
    auto model = env.repository->GetReady(request->model_name(), request->model_version());
    if (!model.ok()) {
      const bool known = env.repository->GetStatus(request->model_name()).ok();
      finish(known ? request->model_name() : std::string(), std::string(), model.status());
      return;
    }
    const Model& m = **model;
    if (log_line != nullptr) log_line->version = m.version_string();
    ModelStats* stats = &m.stats();  // outlives the callback: Stop() drains first
    auto fail = [&](const absl::Status& status) {
      stats->RecordFailure(NsSince(start), NowMs());
      finish(m.name(), m.version_string(), status);
    };
    // Admitted before decoding, so that a refused request costs no tensors.
    // Raw inputs are viewed in place: `request` lives until `finish` (the
    // reactor's), after the scheduler's last read of them.
    Admission admission;
    absl::StatusOr<DecodedInferRequest> decoded =
        DecodeInferRequest(*request, SignatureOf(m), *env.shared_memory, env.limits,
                           [&](int64_t bytes) -> absl::Status {
                             ASSIGN_OR_RETURN(admission, Admit(env, m, bytes));
                             return absl::OkStatus();
                           });
    if (!decoded.ok()) return fail(decoded.status());
    std::unique_ptr<InferenceRequest>& parsed = decoded->request;
    if (log_line != nullptr) log_line->batch_size = parsed->batch_size;
    parsed->deadline = call_options.deadline;
    parsed->is_cancelled = call_options.is_cancelled;
    parsed->deadline_cancel_slack = kDeadlineCancelSlack;

    RequestTimings timings;
    timings.batch_size = parsed->batch_size;
    timings.compute_input_ns = NsSince(start);
    const SteadyClock::time_point enqueued_at = SteadyClock::now();
    // The reactor keeps request and response alive until `finish`. The callback
    // holds no reference on the Model, only its address: ~Model drains the
    // scheduler (running this callback) before any member goes away.
    auto finish_holder = std::make_shared<InferFinish>(std::move(finish));
    DoneCallback done =
        [finish_holder, request, response, model = &m, timings, start, enqueued_at,
         shm_outputs = std::move(decoded->shm_outputs),
         max_reply_bytes = env.limits.max_message_bytes, output_names = parsed->output_names,
         admission = std::move(admission)](absl::StatusOr<InferenceResult> result) mutable {
      timings.compute_infer_ns = NsSince(enqueued_at);
      if (result.ok()) {  // the scheduler's own queue wait and engine run
        timings.queue_ns = static_cast<uint64_t>(absl::ToInt64Nanoseconds(result->queue_time));
        timings.compute_infer_ns =
            static_cast<uint64_t>(absl::ToInt64Nanoseconds(result->compute_time));
      }
      const SteadyClock::time_point output_start = SteadyClock::now();
      absl::Status status = result.status();
      const std::string& name = model->name();
      const std::string& version = model->version_string();
      ModelStats* stats = &model->stats();
      if (status.ok()) {
        status = StatusFromExceptions("writing the response", [&] {
          RETURN_IF_ERROR(
              FillInferResponse(*request, name, version, output_names, *result, response));
          RETURN_IF_ERROR(WriteSharedMemoryOutputs(*request, shm_outputs, response));
          return CheckReplySize(*response, max_reply_bytes);
        });
      }
      timings.compute_output_ns = NsSince(output_start);
      timings.total_ns = NsSince(start);
      timings.end_ms = NowMs();
      if (status.ok()) {
        stats->RecordSuccess(timings);
      } else {
        stats->RecordFailure(timings.total_ns, timings.end_ms);
      }
      (*finish_holder)(name, version, status);
      admission.Release();  // answered
    };
    absl::Status status = m.scheduler().Enqueue(std::move(parsed), std::move(done));
    if (status.ok()) return;
    finish = std::move(*finish_holder);
    if (status.code() == absl::StatusCode::kUnavailable && attempt < kAttempts) {
      auto again = env.repository->GetReady(request->model_name(), request->model_version());
      if (again.ok() && again->get() != model->get()) continue;
    }
    return fail(status);
  }
}

}  // namespace

void StartInference(const InferEnv& env, const inference::ModelInferRequest* request,
                    inference::ModelInferResponse* response, InferFinish finish,
                    const InferCallOptions& call_options) {
  // `finish` runs exactly once even when decoding throws after it ran or the
  // request was handed to the scheduler: the call is answered (INTERNAL or
  // RESOURCE_EXHAUSTED) instead of the exception unwinding into gRPC with the
  // call open and the server's drain waiting on it forever.
  struct Once {
    std::atomic<bool> done{false};
    InferFinish finish;
  };
  auto once = std::make_shared<Once>();
  once->finish = std::move(finish);
  InferFinish guarded =
      [once](const std::string& model, const std::string& version, const absl::Status& status) {
    if (!once->done.exchange(true)) once->finish(model, version, status);
  };
  const absl::Status thrown = StatusFromExceptions("decoding the request", [&] {
    StartInferenceUnguarded(env, request, response, std::move(guarded), call_options);
    return absl::OkStatus();
  });
  if (!thrown.ok() && !once->done.exchange(true)) once->finish("", "", thrown);
}

}  // namespace onyx::server
