#include "server/observability/health_service.h"

#include <memory>

#include "grpcpp/client_context.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
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

TEST(HealthServiceTest, WatchStreamsTheCurrentStatusThenEveryChange) {
  ServingState state;
  HealthService health(&state, Lookup, absl::Milliseconds(5));
  grpc::ServerBuilder builder;
  builder.RegisterService(&health);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  auto stub = grpc::health::v1::Health::NewStub(server->InProcessChannel(grpc::ChannelArguments()));

  grpc::ClientContext context;
  grpc::health::v1::HealthCheckRequest request;  // "" = the server
  auto reader = stub->Watch(&context, request);
  HealthCheckResponse response;
  ASSERT_TRUE(reader->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::NOT_SERVING);
  state.SetServing(true);
  health.Notify();
  ASSERT_TRUE(reader->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVING);
  state.SetServing(false);
  ASSERT_TRUE(reader->Read(&response));  // noticed by the poller, no Notify
  EXPECT_EQ(response.status(), HealthCheckResponse::NOT_SERVING);

  grpc::ClientContext unknown_context;
  request.set_service("nope");
  auto unknown = stub->Watch(&unknown_context, request);
  ASSERT_TRUE(unknown->Read(&response));
  EXPECT_EQ(response.status(), HealthCheckResponse::SERVICE_UNKNOWN);

  context.TryCancel();
  unknown_context.TryCancel();
  EXPECT_FALSE(reader->Read(&response));
  EXPECT_FALSE(unknown->Read(&response));
  reader->Finish();
  unknown->Finish();
  server->Shutdown();
}

}  // namespace
}  // namespace onyx::server
