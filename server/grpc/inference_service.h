// InferenceService: inference.GRPCInferenceService over the gRPC callback API.
//
//   InferenceService::Options options;
//   options.repository = repository.get();
//   options.metrics = metrics.get();
//   options.serving = &serving_state;
//   ASSIGN_OR_RETURN(auto service, InferenceService::Create(options));
//   builder.RegisterService(service.get());
//
// Handlers are thin and never block on inference: ModelInfer validates and
// decodes on the gRPC thread, enqueues on the model's scheduler and returns; the
// scheduler's worker encodes the reply and finishes the reactor. ModelStreamInfer
// does the same per streamed request. RepositoryModelLoad/Unload run one at a
// time on the repository work queue's thread (a load takes seconds; the
// repository serialises them anyway) and finish the reactor from there; more
// than kMaxQueuedRepositoryCalls waiting calls are RESOURCE_EXHAUSTED.
// Implemented: everything but the CUDA shared memory RPCs (UNIMPLEMENTED).
// A ModelInfer refused for load (overload.h: full queue, byte budgets) gets
// its retry hint as `grpc-retry-pushback-ms` trailing metadata.
// ModelStatistics counts only requests for models the repository serves.
//
// Shutdown: StopAccepting() makes new inference and load/unload calls fail with
// UNAVAILABLE; AwaitIdle() then waits for the calls already accepted. gRPC's own
// Server::Shutdown waits for idle client connections to go away too, so main
// drains here first and gives Shutdown only a short grace period.
// Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpc_service.grpc.pb.h"
#include "server/grpc/call_gate.h"
#include "server/grpc/infer_call.h"
#include "server/grpc/stream_infer.h"
#include "server/grpc/work_queue.h"
#include "server/memory/shared_memory.h"
#include "server/models/model_repository.h"
#include "server/observability/metrics.h"
#include "server/observability/serving_state.h"

namespace onyx::server {

class InferenceService final : public inference::GRPCInferenceService::CallbackService {
 public:
  struct Options {
    // All three must outlive the service (and the gRPC server it is registered in).
    ModelRepository* repository = nullptr;
    Metrics* metrics = nullptr;
    const ServingState* serving = nullptr;
    // ServerMetadata.version.
    std::string version;
    // Request decoding limits (max_elements_per_input).
    ParseLimits limits;
    // Samples the inference calls that log a line; null: none. Must outlive the service.
    const RequestLogSampler* request_log = nullptr;
    // The server's in-flight request byte budget (max_inflight_bytes); null:
    // none. Must outlive the service.
    ByteBudget* inflight_bytes = nullptr;
    // Per ModelStreamInfer stream: reply bytes buffered for a client that is
    // not reading (stream_infer.h).
    int64_t max_stream_buffer_bytes = kDefaultMaxStreamBufferBytes;
  };

  // INVALID_ARGUMENT when a pointer is null.
  static absl::StatusOr<std::unique_ptr<InferenceService>> Create(const Options& options);

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* context,
                                       const inference::ServerLiveRequest* request,
                                       inference::ServerLiveResponse* response) override;
  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* context,
                                        const inference::ServerReadyRequest* request,
                                        inference::ServerReadyResponse* response) override;
  // Unknown models are not an error here: they are simply not ready.
  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* context,
                                       const inference::ModelReadyRequest* request,
                                       inference::ModelReadyResponse* response) override;
  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* context,
                                           const inference::ServerMetadataRequest* request,
                                           inference::ServerMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* context,
                                          const inference::ModelMetadataRequest* request,
                                          inference::ModelMetadataResponse* response) override;
  grpc::ServerUnaryReactor* ModelConfig(grpc::CallbackServerContext* context,
                                        const inference::ModelConfigRequest* request,
                                        inference::ModelConfigResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryIndex(grpc::CallbackServerContext* context,
                                            const inference::RepositoryIndexRequest* request,
                                            inference::RepositoryIndexResponse* response) override;
  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* context,
                                       const inference::ModelInferRequest* request,
                                       inference::ModelInferResponse* response) override;
  grpc::ServerBidiReactor<inference::ModelInferRequest, inference::ModelStreamInferResponse>*
  ModelStreamInfer(grpc::CallbackServerContext* context) override;
  // Empty name: every READY model; otherwise that model (NOT_FOUND / UNAVAILABLE
  // as ModelInfer would answer).
  grpc::ServerUnaryReactor* ModelStatistics(grpc::CallbackServerContext* context,
                                            const inference::ModelStatisticsRequest* request,
                                            inference::ModelStatisticsResponse* response) override;
  // ModelRepository::Load / Unload. repository_name must be "" or the root.
  grpc::ServerUnaryReactor* RepositoryModelLoad(
      grpc::CallbackServerContext* context, const inference::RepositoryModelLoadRequest* request,
      inference::RepositoryModelLoadResponse* response) override;
  grpc::ServerUnaryReactor* RepositoryModelUnload(
      grpc::CallbackServerContext* context, const inference::RepositoryModelUnloadRequest* request,
      inference::RepositoryModelUnloadResponse* response) override;
  // SharedMemoryRegistry::Register / Status / Unregister.
  grpc::ServerUnaryReactor* SystemSharedMemoryRegister(
      grpc::CallbackServerContext* context,
      const inference::SystemSharedMemoryRegisterRequest* request,
      inference::SystemSharedMemoryRegisterResponse* response) override;
  grpc::ServerUnaryReactor* SystemSharedMemoryStatus(
      grpc::CallbackServerContext* context,
      const inference::SystemSharedMemoryStatusRequest* request,
      inference::SystemSharedMemoryStatusResponse* response) override;
  grpc::ServerUnaryReactor* SystemSharedMemoryUnregister(
      grpc::CallbackServerContext* context,
      const inference::SystemSharedMemoryUnregisterRequest* request,
      inference::SystemSharedMemoryUnregisterResponse* response) override;

  // New inference and load/unload calls fail with UNAVAILABLE from now on
  // (streams stay open but answer each new request with that error). Idempotent.
  void StopAccepting();

  // Blocks until no inference or load/unload call is in progress or `timeout`
  // passes; true when idle.
  bool AwaitIdle(absl::Duration timeout);

 private:
  explicit InferenceService(const Options& options);
  InferEnv env() {
    return InferEnv{options_.repository, &shared_memory_, options_.limits, options_.request_log,
                    options_.inflight_bytes};
  }
  static constexpr size_t kMaxQueuedRepositoryCalls = 64;

  // Runs `work` on the repository work queue inside the gate and finishes the
  // call with its status.
  grpc::ServerUnaryReactor* RunOnRepositoryQueue(grpc::CallbackServerContext* context,
                                                 absl::AnyInvocable<absl::Status()> work);

  const Options options_;
  CallGate gate_;
  SharedMemoryRegistry shared_memory_;
  // Last member: joined first, while the gate and the options are alive.
  WorkQueue repository_calls_{"repository", 1, kMaxQueuedRepositoryCalls};
};

}  // namespace onyx::server
