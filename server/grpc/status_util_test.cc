#include "server/grpc/status_util.h"

#include "gtest/gtest.h"

namespace onyx::server {
namespace {

TEST(StatusUtilTest, KeepsCodeAndMessage) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  const struct {
    absl::Status in;
    grpc::StatusCode code;
  } cases[] = {
      {absl::NotFoundError("m"), grpc::StatusCode::NOT_FOUND},
      {absl::InvalidArgumentError("m"), grpc::StatusCode::INVALID_ARGUMENT},
      {absl::ResourceExhaustedError("m"), grpc::StatusCode::RESOURCE_EXHAUSTED},
      {absl::UnavailableError("m"), grpc::StatusCode::UNAVAILABLE},
      {absl::UnimplementedError("m"), grpc::StatusCode::UNIMPLEMENTED},
      {absl::InternalError("m"), grpc::StatusCode::INTERNAL},
      {absl::CancelledError("m"), grpc::StatusCode::CANCELLED},
      {absl::DeadlineExceededError("m"), grpc::StatusCode::DEADLINE_EXCEEDED},
  };
  for (const auto& c : cases) {
    grpc::Status s = ToGrpcStatus(c.in);
    EXPECT_EQ(s.error_code(), c.code) << c.in;
    EXPECT_EQ(s.error_message(), "m");
  }
}

}  // namespace
}  // namespace onyx::server
