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
// scheduler's worker encodes the reply and finishes the reactor. Implemented:
// ServerLive, ServerReady, ModelReady, ServerMetadata, ModelMetadata, ModelInfer,
// ModelConfig, RepositoryIndex. Every other RPC answers UNIMPLEMENTED.
//
// Shutdown: StopAccepting() makes new ModelInfer calls fail with UNAVAILABLE;
// AwaitIdle() then waits for the calls already accepted. gRPC's own
// Server::Shutdown waits for idle client connections to go away too, so main
// drains here first and gives Shutdown only a short grace period.
// Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpc_service.grpc.pb.h"
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

  // New ModelInfer calls fail with UNAVAILABLE from now on. Idempotent.
  void StopAccepting();

  // Blocks until no ModelInfer call is in progress or `timeout` passes; true
  // when idle.
  bool AwaitIdle(absl::Duration timeout);

 private:
  explicit InferenceService(const Options& options);
  // Admission for ModelInfer: false once StopAccepting() was called; on true
  // the caller must call Done() when it has finished the reactor.
  bool Begin();
  void Done();

  const Options options_;
  absl::Mutex mu_;
  bool accepting_ ABSL_GUARDED_BY(mu_) = true;
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace onyx::server
