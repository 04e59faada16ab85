#include "server/grpc/inference_service.h"

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/grpc/model_messages.h"
#include "server/grpc/status_util.h"
#include "server/grpc/stream_infer.h"
#include "server/scheduling/overload.h"

namespace onyx::server {
namespace {

// The call's gRPC deadline on the real clock; InfiniteFuture when it has none.
absl::Time DeadlineOf(const grpc::CallbackServerContext& context) {
  const auto deadline = context.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) return absl::InfiniteFuture();
  return absl::FromChrono(deadline);
}

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
  for (const char* extension : {"model_repository", "model_configuration", "statistics",
                                "system_shared_memory", "binary_tensor_data"}) {
    response->add_extensions(extension);
  }
  return Reply(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* InferenceService::ModelMetadata(
    grpc::CallbackServerContext* context, const inference::ModelMetadataRequest* request,
    inference::ModelMetadataResponse* response) {
  auto model = options_.repository->GetReady(request->name(), request->version());
  if (model.ok()) {
    std::vector<int64_t> versions;
    for (const auto& ready : options_.repository->ReadyModels(request->name())) {
      versions.push_back(ready->version());
    }
    FillModelMetadata(**model, versions, response);
  }
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

void InferenceService::StopAccepting() { gate_.Close(); }

bool InferenceService::AwaitIdle(absl::Duration timeout) { return gate_.AwaitIdle(timeout); }

grpc::ServerUnaryReactor* InferenceService::ModelInfer(grpc::CallbackServerContext* context,
                                                       const inference::ModelInferRequest* request,
                                                       inference::ModelInferResponse* response) {
  const auto start = std::chrono::steady_clock::now();
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!gate_.Enter()) {
    reactor->Finish(ToGrpcStatus(absl::UnavailableError("server is shutting down")));
    return reactor;
  }
  // Finishes the call and counts it, exactly once per accepted call. Runs on
  // this thread for early errors, on a scheduler worker otherwise.
  StartInference(
      env(), request, response,
      [this, context, reactor, start](const std::string& model_label,
                                      const std::string& version_label,
                                      const absl::Status& status) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    options_.metrics->RecordRequest(model_label, version_label, status, seconds);
    if (std::optional<absl::Duration> retry = RetryAfterOf(status)) {
      context->AddTrailingMetadata(std::string(kRetryPushbackKey),
                                   std::to_string(absl::ToInt64Milliseconds(*retry)));
    }
    reactor->Finish(ToGrpcStatus(status));
    gate_.Exit();
      },
      InferCallOptions{DeadlineOf(*context), [context] { return context->IsCancelled(); }});
  return reactor;
}

grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
InferenceService::ModelStreamInfer(grpc::CallbackServerContext* context) {
  // The context outlives every request of the stream: the reactor finishes
  // only after all of them have completed.
  StreamInferOptions stream;
  stream.env = env();
  stream.metrics = options_.metrics;
  stream.gate = &gate_;
  stream.is_cancelled = [context] { return context->IsCancelled(); };
  stream.max_buffer_bytes = options_.max_stream_buffer_bytes;
  return NewStreamInferReactor(stream);
}

grpc::ServerUnaryReactor* InferenceService::ModelStatistics(
    grpc::CallbackServerContext* context, const inference::ModelStatisticsRequest* request,
    inference::ModelStatisticsResponse* response) {
  // A named version: that one. A name alone: every READY version of it. No
  // name: every READY version of every model.
  if (!request->name().empty() && !request->version().empty()) {
    auto model = options_.repository->GetReady(request->name(), request->version());
    if (model.ok()) FillModelStatistics(**model, response->add_model_stats());
    return Reply(context, model.status());
  }
  if (!request->name().empty()) {
    auto any = options_.repository->GetReady(request->name(), "");
    if (!any.ok()) return Reply(context, any.status());
  }
  for (const auto& model : options_.repository->ReadyModels(request->name())) {
    FillModelStatistics(*model, response->add_model_stats());
  }
  return Reply(context, absl::OkStatus());
}

grpc::ServerUnaryReactor* InferenceService::RunOnRepositoryQueue(
    grpc::CallbackServerContext* context, absl::AnyInvocable<absl::Status()> work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!gate_.Enter()) {
    reactor->Finish(ToGrpcStatus(absl::UnavailableError("server is shutting down")));
    return reactor;
  }
  // The gate keeps main from tearing the repository down under the queue.
  absl::Status queued = repository_calls_.Submit([this, reactor, work = std::move(work)]() mutable {
    const absl::Status status = StatusFromExceptions("the repository call", [&] { return work(); });
    reactor->Finish(ToGrpcStatus(status));
    gate_.Exit();
  });
  if (!queued.ok()) {
    reactor->Finish(ToGrpcStatus(queued));
    gate_.Exit();
  }
  return reactor;
}

namespace {

absl::Status CheckRepositoryName(const std::string& name, const ModelRepository& repository) {
  if (name.empty() || name == repository.root()) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat("unknown repository '", name, "'"));
}

}  // namespace

grpc::ServerUnaryReactor* InferenceService::RepositoryModelLoad(
    grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
    inference::RepositoryModelLoadResponse*) {
  if (absl::Status s = CheckRepositoryName(request->repository_name(), *options_.repository);
      !s.ok()) {
    return Reply(context, s);
  }
  absl::StatusOr<LoadOverrides> overrides = ParseLoadParameters(request->parameters());
  if (!overrides.ok()) return Reply(context, overrides.status());
  ModelRepository* repository = options_.repository;
  return RunOnRepositoryQueue(
      context, [repository, name = request->model_name(), overrides = std::move(*overrides)] {
        return repository->Load(name, overrides);
      });
}

grpc::ServerUnaryReactor* InferenceService::RepositoryModelUnload(
    grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
    inference::RepositoryModelUnloadResponse*) {
  if (absl::Status s = CheckRepositoryName(request->repository_name(), *options_.repository);
      !s.ok()) {
    return Reply(context, s);
  }
  ModelRepository* repository = options_.repository;
  return RunOnRepositoryQueue(
      context, [repository, name = request->model_name()] { return repository->Unload(name); });
}

grpc::ServerUnaryReactor* InferenceService::SystemSharedMemoryRegister(
    grpc::CallbackServerContext* context,
    const inference::SystemSharedMemoryRegisterRequest* request,
    inference::SystemSharedMemoryRegisterResponse*) {
  return Reply(context, shared_memory_.Register(request->name(), request->key(), request->offset(),
                                                request->byte_size()));
}

grpc::ServerUnaryReactor* InferenceService::SystemSharedMemoryStatus(
    grpc::CallbackServerContext* context, const inference::SystemSharedMemoryStatusRequest* request,
    inference::SystemSharedMemoryStatusResponse* response) {
  auto regions = shared_memory_.Status(request->name());
  if (regions.ok()) {
    for (const SharedMemoryInfo& info : *regions) {
      auto& out = (*response->mutable_regions())[info.name];
      out.set_name(info.name);
      out.set_key(info.key);
      out.set_offset(info.offset);
      out.set_byte_size(info.byte_size);
    }
  }
  return Reply(context, regions.status());
}

grpc::ServerUnaryReactor* InferenceService::SystemSharedMemoryUnregister(
    grpc::CallbackServerContext* context,
    const inference::SystemSharedMemoryUnregisterRequest* request,
    inference::SystemSharedMemoryUnregisterResponse*) {
  return Reply(context, shared_memory_.Unregister(request->name()));
}

}  // namespace onyx::server
