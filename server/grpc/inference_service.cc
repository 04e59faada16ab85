#include "server/grpc/inference_service.h"

#include <chrono>
#include <utility>

#include "server/grpc/infer_messages.h"
#include "server/grpc/model_messages.h"
#include "server/grpc/status_util.h"

namespace onyx::server {
namespace {

grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* context, const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace

absl::StatusOr<std::unique_ptr<InferenceService>> InferenceService::Create(const Options& options) {
  if (options.repository == nullptr || options.metrics == nullptr || options.serving == nullptr) {
    return absl::InvalidArgumentError("InferenceService needs a repository, metrics and state");
  }
  return std::unique_ptr<InferenceService>(new InferenceService(options));
}

InferenceService::InferenceService(const Options& options) : options_(options) {}

grpc::ServerUnaryReactor* InferenceService::ServerLive(grpc::CallbackServerContext* context,
                                                       const inference::ServerLiveRequest*,
                                                       inference::ServerLiveResponse* response) {
  response->set_live(true);
  return Reply(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* InferenceService::ServerReady(grpc::CallbackServerContext* context,
                                                        const inference::ServerReadyRequest*,
                                                        inference::ServerReadyResponse* response) {
  response->set_ready(options_.serving->serving());
  return Reply(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* InferenceService::ModelReady(grpc::CallbackServerContext* context,
                                                       const inference::ModelReadyRequest* request,
                                                       inference::ModelReadyResponse* response) {
  response->set_ready(options_.repository->GetReady(request->name(), request->version()).ok());
  return Reply(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* InferenceService::ServerMetadata(
    grpc::CallbackServerContext* context, const inference::ServerMetadataRequest*,
    inference::ServerMetadataResponse* response) {
  response->set_name("onyx");
  response->set_version(options_.version);
  response->add_extensions("model_configuration");
  return Reply(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* InferenceService::ModelMetadata(
    grpc::CallbackServerContext* context, const inference::ModelMetadataRequest* request,
    inference::ModelMetadataResponse* response) {
  auto model = options_.repository->GetReady(request->name(), request->version());
  if (model.ok()) FillModelMetadata(**model, response);
  return Reply(context, model.status());
}

grpc::ServerUnaryReactor* InferenceService::ModelConfig(
    grpc::CallbackServerContext* context, const inference::ModelConfigRequest* request,
    inference::ModelConfigResponse* response) {
  auto model = options_.repository->GetReady(request->name(), request->version());
  if (model.ok()) FillModelConfig(**model, response->mutable_config());
  return Reply(context, model.status());
}

grpc::ServerUnaryReactor* InferenceService::RepositoryIndex(
    grpc::CallbackServerContext* context, const inference::RepositoryIndexRequest* request,
    inference::RepositoryIndexResponse* response) {
  FillRepositoryIndex(options_.repository->Index(), request->ready(), response);
  return Reply(context, absl::OkStatus());
}

void InferenceService::StopAccepting() {
  absl::MutexLock lock(&mu_);
  accepting_ = false;
}

bool InferenceService::AwaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

bool InferenceService::Begin() {
  absl::MutexLock lock(&mu_);
  if (!accepting_) return false;
  ++in_flight_;
  return true;
}

void InferenceService::Done() {
  absl::MutexLock lock(&mu_);
  --in_flight_;
}

grpc::ServerUnaryReactor* InferenceService::ModelInfer(grpc::CallbackServerContext* context,
                                                       const inference::ModelInferRequest* request,
                                                       inference::ModelInferResponse* response) {
  const auto start = std::chrono::steady_clock::now();
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  Metrics* metrics = options_.metrics;
  if (!Begin()) {
    reactor->Finish(ToGrpcStatus(absl::UnavailableError("server is shutting down")));
    return reactor;
  }
  // Finishes the call and counts it, exactly once per accepted call. Runs on
  // this thread for early errors, on a scheduler worker otherwise.
  auto finish = [this, reactor, metrics, start](const std::string& model_label,
                                                const absl::Status& status) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    metrics->RecordRequest(model_label, status.code(), seconds);
    reactor->Finish(ToGrpcStatus(status));
    Done();
  };

  auto model = options_.repository->GetReady(request->model_name(), request->model_version());
  if (!model.ok()) {
    // Only names the repository knows become label values.
    const bool known = options_.repository->GetStatus(request->model_name()).ok();
    finish(known ? request->model_name() : std::string(), model.status());
    return reactor;
  }
  absl::StatusOr<std::unique_ptr<InferenceRequest>> parsed = ParseInferRequest(*request, **model);
  if (!parsed.ok()) {
    finish((*model)->name(), parsed.status());
    return reactor;
  }
  // The reactor keeps request and response alive until Finish. The callback
  // holds no Model: the scheduler drains before its model goes away.
  DoneCallback done =
      [finish, request, response, name = (*model)->name(), version = (*model)->version_string(),
       output_names = (*parsed)->output_names](absl::StatusOr<InferenceResult> result) {
        absl::Status status = result.status();
        if (status.ok()) {
          status = FillInferResponse(*request, name, version, output_names, *result, response);
        }
        finish(name, status);
      };
  absl::Status enqueued = (*model)->scheduler().Enqueue(std::move(*parsed), std::move(done));
  if (!enqueued.ok()) finish((*model)->name(), enqueued);
  return reactor;
}

}  // namespace onyx::server
