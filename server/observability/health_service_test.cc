#include "server/observability/health_service.h"

#include "gtest/gtest.h"

namespace onyx::server {
namespace {

using grpc::health::v1::HealthCheckResponse;

absl::StatusOr<ModelStatus> Lookup(absl::string_view name) {
  ModelStatus status;
  status.name = std::string(name);
  if (name == "ready") {
    status.state = ModelState::kReady;
  } else if (name == "loading") {
    status.state = ModelState::kLoading;
  } else {
    return absl::NotFoundError("unknown model");
  }
  return status;
}

TEST(HealthServiceTest, ServerAndModelStatuses) {
  ServingState state;
  HealthService health(&state, Lookup);
  EXPECT_EQ(health.StatusOf("").value(), HealthCheckResponse::NOT_SERVING);  // starting
  state.SetServing(true);
  EXPECT_EQ(health.StatusOf("").value(), HealthCheckResponse::SERVING);
  EXPECT_EQ(health.StatusOf("ready").value(), HealthCheckResponse::SERVING);
  EXPECT_EQ(health.StatusOf("loading").value(), HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(health.StatusOf("nope").status().code(), absl::StatusCode::kNotFound);
  state.SetServing(false);  // SIGTERM: everything reports NOT_SERVING
  EXPECT_EQ(health.StatusOf("").value(), HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(health.StatusOf("ready").value(), HealthCheckResponse::NOT_SERVING);
}

}  // namespace
}  // namespace onyx::server
