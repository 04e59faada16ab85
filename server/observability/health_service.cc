#include "server/observability/health_service.h"

#include <utility>

#include "server/grpc/status_util.h"

namespace onyx::server {

using grpc::health::v1::HealthCheckResponse;

HealthService::HealthService(const ServingState* state, ModelStatusLookup lookup)
    : state_(state), lookup_(std::move(lookup)) {}

absl::StatusOr<HealthCheckResponse::ServingStatus> HealthService::StatusOf(
    absl::string_view service) const {
  const bool serving = state_->serving();
  if (service.empty()) {
    return serving ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING;
  }
  absl::StatusOr<ModelStatus> model = lookup_(service);
  if (!model.ok()) return model.status();
  return serving && model->state == ModelState::kReady ? HealthCheckResponse::SERVING
                                                       : HealthCheckResponse::NOT_SERVING;
}

grpc::ServerUnaryReactor* HealthService::Check(grpc::CallbackServerContext* context,
                                               const grpc::health::v1::HealthCheckRequest* request,
                                               HealthCheckResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<HealthCheckResponse::ServingStatus> status = StatusOf(request->service());
  if (status.ok()) response->set_status(*status);
  reactor->Finish(ToGrpcStatus(status.status()));
  return reactor;
}

}  // namespace onyx::server
