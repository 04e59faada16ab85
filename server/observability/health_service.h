// HealthService: grpc.health.v1.Health over the callback API.
//
//   HealthService health(&serving_state, [&](absl::string_view name) {
//     return repository->GetStatus(name);            // NOT_FOUND for unknown models
//   });
//   builder.RegisterService(&health);
//
// Check("") reports the server: SERVING while ServingState says so, else
// NOT_SERVING. Check(<model>) reports that model: SERVING when it is READY and the
// server is serving, else NOT_SERVING; an unknown name is the gRPC error
// NOT_FOUND. Watch is not implemented yet (UNIMPLEMENTED).
// Thread-safe.
#pragma once

#include <functional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "health.grpc.pb.h"
#include "server/models/model_repository.h"
#include "server/observability/serving_state.h"

namespace onyx::server {

class HealthService final : public grpc::health::v1::Health::CallbackService {
 public:
  // Returns the model's status, or NOT_FOUND.
  using ModelStatusLookup = std::function<absl::StatusOr<ModelStatus>(absl::string_view)>;

  // `state` must outlive the service; `lookup` must be thread-safe.
  HealthService(const ServingState* state, ModelStatusLookup lookup);

  grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* context,
                                  const grpc::health::v1::HealthCheckRequest* request,
                                  grpc::health::v1::HealthCheckResponse* response) override;

  // The answer Check gives, without gRPC (for tests and logs).
  absl::StatusOr<grpc::health::v1::HealthCheckResponse::ServingStatus> StatusOf(
      absl::string_view service) const;

 private:
  const ServingState* const state_;
  const ModelStatusLookup lookup_;
};

}  // namespace onyx::server
